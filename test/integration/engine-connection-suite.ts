/**
 * The engine-connection contract: what the pool, the executor and the transaction registry rely on
 * from one `EngineConnection`, checked directly against a real server (no pool, no HTTP) for every
 * engine. Each engine's test file supplies an `EngineConnectionHarness`: a database (whose URL names
 * the engine), a way to watch and end sessions from the server's side, and the few SQL texts that
 * differ (placeholders and row series from the core suite's Dialect, the rest here).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Param } from "../../schemas/query.js";
import type { Engine, EngineConnection, ExecuteOptions, StatementResult } from "../../gateway/engines/engine.js";
import { engineForUrl } from "../../gateway/engines/engine-for-url.js";
import { GatewayError } from "../../gateway/errors.js";
import { waitFor } from "../support/wait-for.js";
import type { Dialect } from "./core-suite.js";

/** What differs between the engines' SQL for this suite, beyond the core suite's Dialect. */
export interface EngineConnectionSql extends Pick<Dialect, "p" | "series"> {
  /** Answers the server's id of the session (the id `running` and `terminate` take), as one value. */
  sessionId: string;
  /** Runs on the server for this many seconds, then answers one row. */
  sleep(seconds: number): string;
  /** Creates the table `contract_items (id int primary key, name text-ish)` the suite writes to. */
  createItems: string;
  /** A session setting the suite changes (`change`), and how to read it back as one value (`read`). */
  setting: { change: string; read: string };
}

/** A database on a real server (its URL names the engine), and the server's view of the sessions on it. */
export interface EngineConnectionTarget {
  url: string;
  /** Whether the server is running a statement for the session with this id right now. */
  running(sessionId: number): Promise<boolean>;
  /** Ends the session with this id from another session (the server closes it). */
  terminate(sessionId: number): Promise<void>;
  cleanup(): Promise<void>;
}

export interface EngineConnectionHarness {
  name: string;
  sql: EngineConnectionSql;
  setup(): Promise<EngineConnectionTarget>;
}

const OPTIONS: ExecuteOptions = { timeoutMs: 20000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 1000 };
const TIMEOUT_MS = 10000;
/** A long grace, so that a loaded machine never turns a cancel into a cut. */
const ENGINE_SETTINGS = { preparedCacheSize: 8, cancelGraceMs: 5000, writingFunctions: [] };

/** The GatewayError a promise rejects with (fails the test when it resolves or throws anything else). */
async function gatewayErrorOf(work: Promise<unknown>): Promise<GatewayError> {
  const outcome = await work.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if (!("err" in outcome)) throw new Error(`expected a GatewayError, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.err).toBeInstanceOf(GatewayError);
  return outcome.err as GatewayError;
}

export function defineEngineConnectionSuite(harness: EngineConnectionHarness): void {
  const sql = harness.sql;

  describe(`engine connection contract on ${harness.name}`, () => {
    let target: EngineConnectionTarget;
    let engine: Engine;
    /** Every session a test opens, closed after it. */
    const opened: EngineConnection[] = [];

    const connect = async (): Promise<EngineConnection> => {
      const connection = await engine.connect({ url: target.url }, TIMEOUT_MS);
      opened.push(connection);
      return connection;
    };
    const run = (connection: EngineConnection, text: string, params: readonly Param[] = [], options: Partial<ExecuteOptions> = {}): Promise<StatementResult> =>
      connection.execute(text, params, { ...OPTIONS, ...options });
    const value = async (connection: EngineConnection, text: string, params: readonly Param[] = []): Promise<unknown> => (await run(connection, text, params)).rows[0]?.[0];
    const sessionIdOf = async (connection: EngineConnection): Promise<number> => Number(await value(connection, sql.sessionId));
    const namesIn = async (connection: EngineConnection): Promise<unknown[]> => (await run(connection, "select name from contract_items order by id")).rows.map((row) => row[0]);

    beforeAll(async () => {
      target = await harness.setup();
      engine = engineForUrl(target.url, ENGINE_SETTINGS);
      const setup = await connect();
      await run(setup, sql.createItems);
    });

    afterEach(async () => {
      for (const connection of opened.splice(0)) await connection.close();
      const cleaner = await connect();
      await run(cleaner, "delete from contract_items");
    });

    afterAll(async () => {
      for (const connection of opened.splice(0)) await connection.close();
      await target?.cleanup();
    });

    it("runs a statement and answers its command, columns, rows and row count", async () => {
      const connection = await connect();
      const result = await run(connection, `select g from ${sql.series(3)} order by g`);
      expect(result.command).toBe("SELECT");
      expect(result.columns.map((column) => column.name)).toEqual(["g"]);
      expect(result.rows.map((row) => Number(row[0]))).toEqual([1, 2, 3]);
      expect(result.rowCount).toBe(3);
      const inserted = await run(connection, "insert into contract_items (id, name) values (1, 'one'), (2, 'two')");
      expect(inserted).toMatchObject({ command: "INSERT", columns: [], rows: [], rowCount: 2 });
    });

    it("binds parameters as values, never as SQL text", async () => {
      const connection = await connect();
      const awkward = "it's; drop table contract_items --";
      await run(connection, `insert into contract_items (id, name) values (${sql.p(1)}, ${sql.p(2)})`, [7, awkward]);
      await run(connection, `insert into contract_items (id, name) values (${sql.p(1)}, ${sql.p(2)})`, [8, null]);
      expect(await value(connection, `select name from contract_items where id = ${sql.p(1)}`, [7])).toBe(awkward);
      expect(Number(await value(connection, `select count(*) from contract_items where name is null and id = ${sql.p(1)}`, [8]))).toBe(1);
      expect(await namesIn(connection)).toEqual([awkward, null]);
    });

    it("commits what a transaction wrote and rolls back what it undoes, reporting inTransaction as it goes", async () => {
      const connection = await connect();
      const observer = await connect();
      expect(connection.inTransaction).toBe(false);
      await connection.begin({}, TIMEOUT_MS);
      expect(connection.inTransaction).toBe(true);
      await run(connection, "insert into contract_items (id, name) values (1, 'kept')");
      expect(await namesIn(observer)).toEqual([]);
      expect(await connection.commit(TIMEOUT_MS)).toBe("committed");
      expect(connection.inTransaction).toBe(false);
      expect(await namesIn(observer)).toEqual(["kept"]);

      await connection.begin({ isolation: "repeatable read" }, TIMEOUT_MS);
      await run(connection, "insert into contract_items (id, name) values (2, 'undone')");
      await connection.rollback(TIMEOUT_MS);
      expect(connection.inTransaction).toBe(false);
      expect(await namesIn(observer)).toEqual(["kept"]);
    });

    it("refuses a write in a READ ONLY transaction as a database error the session survives", async () => {
      const connection = await connect();
      await connection.begin({ readOnly: true }, TIMEOUT_MS);
      const refused = await gatewayErrorOf(run(connection, "insert into contract_items (id, name) values (3, 'refused')"));
      expect(refused.code).toBe("DATABASE_ERROR");
      await connection.rollback(TIMEOUT_MS);
      expect(connection.alive).toBe(true);
      expect(await namesIn(connection)).toEqual([]);
    });

    it("cancels a statement on the server when its timeout passes, and keeps the session usable", async () => {
      const connection = await connect();
      const sessionId = await sessionIdOf(connection);
      const timedOut = await gatewayErrorOf(run(connection, sql.sleep(30), [], { timeoutMs: 200 }));
      expect(timedOut.code).toBe("STATEMENT_TIMEOUT");
      await waitFor(async () => !(await target.running(sessionId)), TIMEOUT_MS, "the server to stop the statement");
      expect(connection.alive).toBe(true);
      // The same session answers the next statement, and can be handed on after a reset.
      expect(await sessionIdOf(connection)).toBe(sessionId);
      await connection.reset(TIMEOUT_MS);
      expect(connection.needsReset).toBe(false);
      expect(await sessionIdOf(connection)).toBe(sessionId);
    });

    it("refuses a result over the row or byte limit with RESULT_TOO_LARGE, and the session goes on", async () => {
      const connection = await connect();
      const rows = await gatewayErrorOf(run(connection, `select g from ${sql.series(50)}`, [], { maxResultRows: 10 }));
      expect(rows.code).toBe("RESULT_TOO_LARGE");
      expect(rows.message).toContain("10 rows");
      const bytes = await gatewayErrorOf(run(connection, "select repeat('x', 5000)", [], { maxResultBytes: 1000 }));
      expect(bytes.code).toBe("RESULT_TOO_LARGE");
      expect(bytes.message).toContain("1000 bytes");
      expect(connection.alive).toBe(true);
      expect(Number(await value(connection, "select 1"))).toBe(1);
      // Within the limits, the same statements answer every row.
      expect((await run(connection, `select g from ${sql.series(50)}`)).rows).toHaveLength(50);
    });

    it("needs no reset after plain reads, and only a rollback after a transaction that set nothing", async () => {
      const connection = await connect();
      expect(connection.needsReset).toBe(false);
      await run(connection, "select 1");
      await run(connection, `select count(*) from contract_items where id = ${sql.p(1)}`, [1]);
      expect(connection.needsReset).toBe(false);
      await connection.begin({}, TIMEOUT_MS);
      await run(connection, "insert into contract_items (id, name) values (4, 'pending')");
      expect(connection.needsReset).toBe(true);
      expect(await connection.reset(TIMEOUT_MS)).toBe(false);
      expect(connection.inTransaction).toBe(false);
      expect(connection.needsReset).toBe(false);
      expect(await namesIn(connection)).toEqual([]);
    });

    it("takes the full reset after a statement that changed the session, and the change is gone", async () => {
      const connection = await connect();
      const before = await value(connection, sql.setting.read);
      await run(connection, sql.setting.change);
      expect(await value(connection, sql.setting.read)).not.toEqual(before);
      expect(connection.needsReset).toBe(true);
      expect(await connection.reset(TIMEOUT_MS)).toBe(true);
      expect(connection.needsReset).toBe(false);
      expect(await value(connection, sql.setting.read)).toEqual(before);
    });

    it("returns to its just-connected state on resetFully: temporary tables and open transactions are gone", async () => {
      const connection = await connect();
      await run(connection, "create temporary table contract_scratch (x int)");
      await run(connection, "insert into contract_scratch values (1)");
      await connection.begin({}, TIMEOUT_MS);
      await run(connection, "insert into contract_items (id, name) values (5, 'open')");
      await connection.resetFully(TIMEOUT_MS);
      expect(connection.inTransaction).toBe(false);
      expect(connection.needsReset).toBe(false);
      expect((await gatewayErrorOf(run(connection, "select * from contract_scratch"))).code).toBe("DATABASE_ERROR");
      expect(await namesIn(connection)).toEqual([]);
    });

    it("inspects the instance it reached: a primary, with a position the engine reads", async () => {
      const connection = await connect();
      const state = await connection.inspect(TIMEOUT_MS);
      expect(state.role).toBe("primary");
      expect(state.replayAgeMs).toBeNull();
      if (state.position !== null) expect(engine.isPosition(state.position)).toBe(true);
      await connection.ping(TIMEOUT_MS);
      const committed = await connection.commitPosition(TIMEOUT_MS);
      if (committed !== null) expect(engine.isPosition(committed)).toBe(true);
    });

    it("notices when the server ends an idle session: death listeners hear it once, and statements are refused", async () => {
      const connection = await connect();
      const causes: Error[] = [];
      connection.onDeath((cause) => causes.push(cause));
      await target.terminate(await sessionIdOf(connection));
      await waitFor(() => !connection.alive, TIMEOUT_MS, "the session to notice its end");
      expect(causes).toHaveLength(1);
      expect(causes[0]).toBeInstanceOf(Error);
      expect((await gatewayErrorOf(run(connection, "select 1"))).code).toBe("CONNECTION_LOST");
      expect(causes).toHaveLength(1);
    });

    it("answers OUTCOME_UNKNOWN when the session dies while a statement runs", async () => {
      const connection = await connect();
      const causes: Error[] = [];
      connection.onDeath((cause) => causes.push(cause));
      const sessionId = await sessionIdOf(connection);
      const pending = gatewayErrorOf(run(connection, sql.sleep(30)));
      await waitFor(() => target.running(sessionId), TIMEOUT_MS, "the statement to run");
      await target.terminate(sessionId);
      expect((await pending).code).toBe("OUTCOME_UNKNOWN");
      expect(connection.alive).toBe(false);
      expect(causes).toHaveLength(1);
    });
  });
}
