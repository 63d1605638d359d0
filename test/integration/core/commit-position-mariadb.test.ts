/**
 * A write's consistency token on MariaDB with a binary log, from the write's own OK packet: the
 * session tracks `last_gtid` (set up on connect and after every reset), so an autocommit write and a
 * transaction's COMMIT answer the GTID they produced without a second round trip. The local server
 * has no binary log (its writes produce no GTID), so this runs on a primary of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine, EngineConnection, ExecuteOptions } from "../../../gateway/engines/engine.js";
import { engineForUrl } from "../../../gateway/engines/engine-for-url.js";
import { statementMode } from "../../../gateway/engines/engine-statement.js";
import { type MariaDbTopology, startMariaDbTopology } from "../../support/mariadb-topology.js";

const OPTIONS: ExecuteOptions = { timeoutMs: 20000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 1000 };
const TIMEOUT_MS = 10000;
const INSERT = "insert into tracked (name) values (?)";

describe("MariaDB: the GTID of a write from its own OK packet", () => {
  let topology: MariaDbTopology;
  let engine: Engine;
  const opened: EngineConnection[] = [];
  const connect = async () => {
    const connection = await engine.connect({ url: topology.primary.url("test") }, TIMEOUT_MS);
    opened.push(connection);
    return connection;
  };
  /** An autocommit statement of the engine's, its write's commit position wanted or not. */
  const statement = (sql: string, params: readonly string[], withPosition: boolean) => engine.statement(sql, params, statementMode("as written", false, withPosition));
  /** Statements of the com_select kind this session has run (a separate position read is one). */
  const selectsRun = async (connection: EngineConnection) =>
    Number((await connection.execute(statement("show session status like 'Com_select'", [], false), OPTIONS)).rows[0]?.[1]);

  beforeAll(async () => {
    topology = await startMariaDbTopology(0);
    await topology.primary.query("create table test.tracked (id int auto_increment primary key, name varchar(100))");
    engine = engineForUrl(topology.primary.url("test"), { preparedCacheSize: 8, cancelGraceMs: 5000, writingFunctions: [] });
  }, 120000);

  afterAll(async () => {
    for (const connection of opened) await connection.close();
    await topology?.destroy();
  });

  it("answers the GTID an autocommit write produced, the one @@last_gtid then reads, without a select", async () => {
    const connection = await connect();
    const before = await selectsRun(connection);
    const first = await connection.execute(statement(INSERT, ["one"], true), OPTIONS);
    const second = await connection.execute(statement(INSERT, ["two"], true), OPTIONS);
    // show status is not a select: only the position reads below would count.
    expect(await selectsRun(connection)).toBe(before);
    expect(first.commitPosition).toMatch(/^\d+-\d+-\d+$/);
    expect(second.commitPosition).toMatch(/^\d+-\d+-\d+$/);
    expect(engine.comparePositions(second.commitPosition as string, first.commitPosition as string)).toBeGreaterThan(0);
    expect(await connection.commitPosition(TIMEOUT_MS)).toBe(second.commitPosition);
  });

  it("answers no tracked position for a write that logged nothing, so the caller reads it", async () => {
    const connection = await connect();
    const result = await connection.execute(statement("update tracked set name = 'x' where id < 0", [], true), OPTIONS);
    expect(result.rowCount).toBe(0);
    expect(result.commitPosition).toBeUndefined();
  });

  it("answers a transaction's GTID from its COMMIT, and none for a write inside an open transaction", async () => {
    const connection = await connect();
    await connection.begin({}, TIMEOUT_MS);
    const inside = await connection.execute(statement(INSERT, ["in a transaction"], true), OPTIONS);
    expect(inside.commitPosition).toBeUndefined();
    const before = await selectsRun(connection);
    const { ended, position } = await connection.commitWithPosition(TIMEOUT_MS);
    expect(await selectsRun(connection)).toBe(before);
    expect(ended).toBe("committed");
    expect(position).toMatch(/^\d+-\d+-\d+$/);
    expect(await connection.commitPosition(TIMEOUT_MS)).toBe(position);
  });

  it("keeps tracking after the full reset a session gets between principals", async () => {
    const connection = await connect();
    await connection.execute(statement("set @left_behind = 1", [], false), OPTIONS);
    await connection.resetFully(TIMEOUT_MS);
    const result = await connection.execute(statement(INSERT, ["after a reset"], true), OPTIONS);
    expect(result.commitPosition).toMatch(/^\d+-\d+-\d+$/);
    expect(await connection.commitPosition(TIMEOUT_MS)).toBe(result.commitPosition);
  });
});
