/**
 * A cluster pointed at Aurora DSQL, end to end, against a local PostgreSQL standing in for it: a
 * temporary server that takes passwords over TLS only (test/support/pg-password-server.ts), whose
 * roles' passwords are the tokens @aws-sdk/dsql-signer mints at a frozen time — so the server's
 * acceptance proves the gateway sent exactly the signer's token, for the right action (DbConnectAdmin
 * for admin, DbConnect for custom roles), and minted a new one when due. Sessions there start in UTC
 * at REPEATABLE READ, as DSQL's do.
 *
 * What the stand-in cannot do is simulated by SQL functions named for it: simulate_dsql_occ_conflict
 * raises DSQL's optimistic-concurrency conflicts (SQLSTATE 40001 with OC000/OC001 in the message),
 * simulate_dsql_refusal the refusals DSQL sends for its limits. DSQL's acceptance of a token, its
 * real limits and its real conflict detection are not testable here (docs/aurora.md, "Aurora DSQL").
 */
import { DsqlSigner } from "@aws-sdk/dsql-signer";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { principalLogin } from "../../../gateway/credentials/logins.js";
import type { Pool } from "../../../gateway/pool/pool.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PasswordServer, startPasswordServer } from "../../support/pg-password-server.js";

const AWS_KEYS = { accessKeyId: "AKIAPOOLGATETEST0002", secretAccessKey: "poolgate-test-secret-access-key-0000002" };
const REGION = "us-east-1";
const T0 = Date.UTC(2032, 2, 10, 9, 0, 0);
const MINUTE = 60_000;
const APP = "app-token-0123456789abcdefghij";
const REPORTING = "reporting-token-0123456789abcdefghij";
const SKEWED = "skewed-token-0123456789abcdefghij";
/** Enough for ten callers contending for one row through a pool of four (field report 2: ten were almost always enough). */
const RETRY_ATTEMPTS = 20;

let server: PasswordServer;
let tokens: TokensFile;
let gw: TestGateway;

/** What the gateway must send as the password of `role` now: DbConnectAdmin for admin, else DbConnect. */
function dsqlToken(role: string): Promise<string> {
  const signer = new DsqlSigner({ hostname: "127.0.0.1", region: REGION, credentials: AWS_KEYS });
  return role === "admin" ? signer.getDbConnectAdminAuthToken() : signer.getDbConnectAuthToken();
}

const asApp = (path: string, body: unknown) => gw.post(path, body, bearer(APP));
const query = (sql: string, extra: Record<string, unknown> = {}) => asApp("/v1/query", { sql, ...extra });

function pool(login?: string): Pool {
  const cluster = gw.gateway.clusters.get("default");
  if (!cluster) throw new Error("no default cluster");
  return login === undefined ? cluster.poolOf(cluster.writer) : cluster.poolOf(cluster.writer, login);
}

async function count(sql: string): Promise<number> {
  const [row] = await server.admin<{ n: number }>(sql);
  return Number(row?.n);
}

beforeAll(async () => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", AWS_KEYS.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", AWS_KEYS.secretAccessKey);
  vi.stubEnv("AWS_REGION", REGION);
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  vi.setSystemTime(T0);
  server = await startPasswordServer();
  // DSQL's sessions start in UTC and run at its snapshot isolation, PostgreSQL's REPEATABLE READ.
  await server.admin("ALTER DATABASE postgres SET timezone = 'UTC'");
  await server.admin("ALTER DATABASE postgres SET default_transaction_isolation = 'repeatable read'");
  await server.createRole("admin", await dsqlToken("admin"));
  await server.createRole("poolgate_ro", await dsqlToken("poolgate_ro"));
  await server.admin("GRANT pg_read_all_data TO poolgate_ro");
  await server.createRole("poolgate_skewed", await dsqlToken("poolgate_skewed"));
  await server.admin("ALTER ROLE poolgate_skewed SET DateStyle = 'German'");
  await server.admin("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)");
  await server.admin("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL); INSERT INTO counter VALUES (1, 0)");
  await server.admin("GRANT ALL ON notes, counter TO admin");
  // DSQL's admin may create schemas (the idempotency record's among them).
  await server.admin("GRANT CREATE ON DATABASE postgres TO admin");
  // Sequences count the calls outside any transaction, so a rolled-back attempt still counts.
  await server.admin(`CREATE FUNCTION simulate_dsql_occ_conflict(calls regclass, conflicts int, code text, message text) RETURNS int
    LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval(calls) <= conflicts THEN RAISE EXCEPTION USING MESSAGE = message, ERRCODE = code; END IF;
      RETURN 1;
    END $$`);
  await server.admin(`CREATE FUNCTION simulate_dsql_refusal(code text, message text, detail text DEFAULT '') RETURNS int
    LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION USING MESSAGE = message, ERRCODE = code, DETAIL = detail;
    END $$`);
  // DSQL detects conflicts when a transaction commits: a deferred trigger raises them at COMMIT.
  await server.admin(`CREATE TABLE commit_conflicts (id int PRIMARY KEY, conflicts int NOT NULL); GRANT ALL ON commit_conflicts TO admin`);
  await server.admin(`CREATE FUNCTION simulate_dsql_occ_conflict_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('occ_commit') <= NEW.conflicts THEN
        RAISE EXCEPTION USING MESSAGE = 'mutation conflicts with another transaction, retry as needed (OC000)', ERRCODE = '40001';
      END IF;
      RETURN NULL;
    END $$`);
  await server.admin(`CREATE CONSTRAINT TRIGGER conflict_at_commit AFTER INSERT ON commit_conflicts DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION simulate_dsql_occ_conflict_at_commit()`);
  for (const name of ["occ_statement", "occ_batch", "occ_legacy", "occ_exhausted", "occ_commit"]) {
    await server.admin(`CREATE SEQUENCE ${name}; GRANT USAGE ON SEQUENCE ${name} TO admin`);
  }

  tokens = writeTokensFile({ app: APP, reporting: REPORTING, skewed: SKEWED });
  gw = await startTestGateway({
    clusters: {
      default: {
        // No user or password: the admin role and its token come from the dsql source.
        writerUrl: `postgres://127.0.0.1:${server.port}/postgres`,
        credentials: { source: "dsql", region: REGION },
        tls: { mode: "verify-full", caFile: server.certificates.caFile },
        logins: {
          readOnly: { source: "dsql", username: "poolgate_ro", region: REGION },
          principals: { skewed: { source: "dsql", username: "poolgate_skewed", region: REGION } },
          minIdle: 0,
        },
      },
    },
    auth: {
      bearer: { tokensFile: tokens.path },
      principals: {
        app: { clusters: { default: "read-write" }, admin: true },
        reporting: { clusters: { default: "read-only" } },
        skewed: { clusters: { default: "read-write" } },
      },
    },
    pool: { maxSize: 4, acquireTimeoutMs: 3000 },
    retry: { maxAttempts: RETRY_ATTEMPTS, baseDelayMs: 5, maxDelayMs: 100, maxTotalMs: 20000 },
  });
});

afterAll(async () => {
  await gw?.stop();
  await server?.stop();
  tokens?.remove();
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe("a cluster on Aurora DSQL (local stand-in)", () => {
  it("starts, and serves as the admin role with the signer's DbConnectAdmin token, over TLS", async () => {
    const answer = await query("select current_user as who, (select ssl from pg_stat_ssl where pid = pg_backend_pid()) as tls");
    expect(answer.status).toBe(200);
    expect(answer.body.rows).toEqual([{ who: "admin", tls: true }]);
  });

  it("is one endpoint, always the primary: no replication position asked for, no failover, writes carry no consistency token", async () => {
    const write = await query("insert into notes values (1, 'first')");
    expect(write.status).toBe(200);
    expect(write.body).not.toHaveProperty("consistencyToken");
    const topology = (await gw.get("/v1/admin/topology", bearer(APP))).body.clusters.default;
    expect(topology.endpoints).toHaveLength(1);
    expect(topology.endpoints[0]).toMatchObject({ name: "default/writer", role: "primary", healthy: true, position: null });
    expect(topology.failovers).toEqual([]);
  });

  it("keeps a write exactly-once under an idempotency key, its record made without DDL that DSQL does not know", async () => {
    const write = { idempotencyKey: "dsql-write-1" };
    expect((await query("insert into notes values (100, 'keyed')", write)).body.replayed).toBeUndefined();
    const again = await query("insert into notes values (100, 'keyed')", write);
    expect(again.status).toBe(200);
    expect(again.body.replayed).toBe(true);
    // Only the primary key: DSQL builds other indexes with CREATE INDEX ASYNC alone.
    const indexes = await query("select indexname from pg_indexes where schemaname = 'poolgate' and tablename = 'idempotency_keys'");
    expect(indexes.body.rows).toEqual([{ indexname: "idempotency_keys_pkey" }]);
    await query("delete from notes where id = 100");
  });

  it("gives a read-only principal its own DSQL login (a DbConnect token for a custom role)", async () => {
    const read = await gw.post("/v1/query", { sql: "select current_user as who, count(*)::int as notes from notes" }, bearer(REPORTING));
    expect(read.status).toBe(200);
    expect(read.body.rows).toEqual([{ who: "poolgate_ro", notes: 1 }]);
  });

  it("refuses a session whose settings differ from what the gateway reads values by, saying which", async () => {
    const answer = await gw.post("/v1/query", { sql: "select now()::text as at" }, bearer(SKEWED));
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe("DATABASE_UNAVAILABLE");
    // Startup options would have overridden the role's DateStyle: none were sent, and the check caught it.
    expect(pool(principalLogin("skewed")).databaseState().lastError).toMatch(/Aurora DSQL: the session's settings differ .*DateStyle is "German, (MDY|DMY)"/);
  });
});

describe("optimistic-concurrency conflicts (field report 2)", () => {
  const OC000 = "mutation conflicts with another transaction, retry as needed (OC000)";
  const OC001 = "schema has been updated by another transaction, please retry: (OC001)";

  it("runs a single statement again after DSQL's OC000 conflicts (SQLSTATE 40001)", async () => {
    const answer = await query(`select simulate_dsql_occ_conflict('occ_statement', 2, '40001', '${OC000}') as ok`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ rows: [{ ok: 1 }], attempts: 3 });
  });

  it("runs a whole batch again after OC001 (schema changed), applying its write once", async () => {
    const answer = await asApp("/v1/batch", {
      statements: [{ sql: "insert into notes values (2, 'batched')" }, { sql: `select simulate_dsql_occ_conflict('occ_batch', 2, '40001', '${OC001}')` }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.attempts).toBe(3);
    expect(await count("select count(*) as n from notes where id = 2")).toBe(1);
  });

  it("still retries OC000 sent as a SQLSTATE of its own", async () => {
    const answer = await query("select simulate_dsql_occ_conflict('occ_legacy', 1, 'OC000', 'change conflicts with another transaction') as ok");
    expect(answer.status).toBe(200);
    expect(answer.body.attempts).toBe(2);
  });

  it("answers SERIALIZATION_FAILURE with DSQL's words once the retries are spent, nothing applied", async () => {
    const answer = await asApp("/v1/batch", {
      statements: [{ sql: "insert into notes values (3, 'never')" }, { sql: `select simulate_dsql_occ_conflict('occ_exhausted', 100, '40001', '${OC000}')` }],
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: "SERIALIZATION_FAILURE", retryable: true, attempts: RETRY_ATTEMPTS, database: { sqlstate: "40001", message: OC000 } });
    expect(await count("select count(*) as n from notes where id = 3")).toBe(0);
  });

  it("runs a batch again whose COMMIT DSQL refused for a conflict, applying it once", async () => {
    const answer = await asApp("/v1/batch", { statements: [{ sql: "insert into commit_conflicts values (1, 2)" }] });
    expect(answer.status).toBe(200);
    expect(answer.body.attempts).toBe(3);
    expect(await count("select count(*) as n from commit_conflicts where id = 1")).toBe(1);
  });

  it("answers an interactive transaction's COMMIT refused for a conflict: rolled back, run it again, nothing was committed", async () => {
    const begun = await asApp("/v1/transactions", {});
    expect(begun.status).toBe(201);
    const id = begun.body.transactionId as string;
    expect((await query("insert into commit_conflicts values (2, 1000)", { transactionId: id })).status).toBe(200);
    const committed = await asApp(`/v1/transactions/${id}/commit`, undefined);
    expect(committed.status).toBe(409);
    expect(committed.body.error).toMatchObject({ code: "TRANSACTION_ABORTED", database: { sqlstate: "40001" } });
    expect(committed.body.error.message).toContain("conflicted at COMMIT");
    expect(await count("select count(*) as n from commit_conflicts where id = 2")).toBe(0);
  });

  it("ten concurrent increments of one row at snapshot isolation all land exactly once", async () => {
    const increment = () =>
      asApp("/v1/batch", { statements: [{ sql: "select n from counter where id = 1" }, { sql: "update counter set n = n + 1 where id = 1" }] });
    const answers = await Promise.all(Array.from({ length: 10 }, increment));
    expect(answers.map((answer) => answer.status)).toEqual(new Array(10).fill(200));
    expect(await count("select n from counter where id = 1")).toBe(10);
  });
});

describe("DSQL's limits, reported", () => {
  it.each([
    ["the row limit", "54000", "transaction row limit exceeded", "", /at most 3,000 rows in one transaction/],
    ["the size limit", "54000", "transaction size limit 10mb exceeded", "Current transaction size 12mb 10mb", /at most 10 MiB of data/],
    ["the transaction time", "54000", "transaction age limit of 300s exceeded", "", /maximum transaction time/],
    ["DDL mixed with DML", "0A000", "ddl and dml are not supported in the same transaction", "", /send the DDL statement on its own/],
  ])("%s: DATABASE_ERROR naming the limit and what to do; the batch applied nothing and was not retried", async (_what, code, message, detail, advice) => {
    const before = await count("select count(*) as n from notes");
    const answer = await asApp("/v1/batch", {
      statements: [{ sql: "insert into notes values (100, 'part of a refused transaction')" }, { sql: `select simulate_dsql_refusal('${code}', '${message}', '${detail}')` }],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "DATABASE_ERROR", retryable: false, attempts: 1, database: { sqlstate: code, message } });
    expect(answer.body.error.message).toMatch(advice);
    if (detail) expect(answer.body.error.database.detail).toBe(detail);
    expect(await count("select count(*) as n from notes")).toBe(before);
  });
});

describe("DSQL tokens over time", () => {
  /** Retires the admin pool's sessions, so that the next query opens (and authenticates) a new one. */
  async function queryOnNewSession(): Promise<{ status: number; body: { rows?: unknown[] } }> {
    const created = pool().stats().created;
    pool().retireWhere(() => true, "test: open a new session");
    const answer = await query("select current_user as who");
    if (answer.status === 200) expect(pool().stats().created).toBeGreaterThan(created);
    return answer;
  }

  it("mints a new token after the database refused the cached one, and the request still succeeds", async () => {
    vi.setSystemTime(T0 + 3 * MINUTE);
    await server.setPassword("admin", await dsqlToken("admin"));
    const refused = server.refusedLogins("admin");
    const answer = await queryOnNewSession();
    expect(answer.status).toBe(200);
    // Each session the pool was opening at that moment was refused once; one new token served them all.
    expect(server.refusedLogins("admin")).toBeGreaterThan(refused);
    const settled = server.refusedLogins("admin");
    expect((await queryOnNewSession()).status).toBe(200);
    expect(server.refusedLogins("admin")).toBe(settled);
  });

  it("reuses a token while more than five minutes of its fifteen remain, then signs a fresh one for new sessions", async () => {
    vi.setSystemTime(T0 + 12 * MINUTE);
    const refused = server.refusedLogins("admin");
    expect((await queryOnNewSession()).status).toBe(200);
    expect(server.refusedLogins("admin")).toBe(refused);

    // Ten minutes after the last mint (at +3), new sessions present a token signed now: only that one is accepted.
    vi.setSystemTime(T0 + 13 * MINUTE);
    await server.setPassword("admin", await dsqlToken("admin"));
    const answer = await queryOnNewSession();
    expect(answer.status).toBe(200);
    expect(answer.body.rows).toEqual([{ who: "admin" }]);
    expect(server.refusedLogins("admin")).toBe(refused);
  });
});
