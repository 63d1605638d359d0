import { describe, expect, it } from "vitest";
import { mysqlSqlReader } from "./mysql/sql-reader.js";
import { postgresSqlReader } from "./postgres/sql-reader.js";

describe("statement fingerprints", () => {
  const postgres = postgresSqlReader();
  const mysql = mysqlSqlReader();

  it("PostgreSQL: texts that differ only in constants, spacing or comments share a fingerprint; the sample has placeholders", () => {
    const a = postgres.fingerprint("select * from t where id = 1 and name = 'alice'");
    const b = postgres.fingerprint("SELECT *  FROM t /* x */ WHERE id = 42 AND name = 'bob'");
    expect(a.id).toBe(b.id);
    expect(a.sample).toBe("select * from t where id = $1 and name = $2");
    expect(postgres.fingerprint("select * from u where id = 1").id).not.toBe(a.id);
  });

  it("MySQL: literals become ?, lists of them ..., and the digest ignores comments and keyword case", () => {
    const a = mysql.fingerprint("select * from t where id = 1 and name = 'alice' and x in (1, 2, 3)");
    const b = mysql.fingerprint("SELECT * FROM t /* c */ WHERE id = 2.5 AND name = \"bob\" AND x IN (4, 5)");
    expect(a.id).toBe(b.id);
    expect(a.id).toMatch(/^[0-9a-f]{16}$/);
    expect(a.sample).toBe("select * from t where id = ? and name = ? and x in (...)");
    expect(mysql.fingerprint("select * from t where id = @v").id).not.toBe(a.id);
    expect(mysql.fingerprint("select a from t where b <> 1 and c <=> 'x' and d->>'$.e' >= 2").sample).toBe("select a from t where b <> ? and c <=> ? and d ->> ? >= ?");
  });

  it("texts the reader cannot read share one fingerprint and show none of their text", () => {
    for (const reader of [postgres, mysql]) {
      const unreadable = reader.fingerprint("select 'unterminated secret");
      expect(unreadable.id).toBe("unreadable");
      expect(unreadable.sample).not.toContain("secret");
    }
  });
});
