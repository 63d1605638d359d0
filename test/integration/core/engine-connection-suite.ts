/**
 * The engine-connection contract: what the pool, the executor and the transaction registry rely on
 * from one `EngineConnection`, checked directly against a real server (no pool, no HTTP) for every
 * engine. Each engine's test file supplies an `EngineConnectionHarness`: a database (whose URL names
 * the engine), a way to watch and end sessions from the server's side, and the few SQL texts that
 * differ (placeholders and row series from the core suite's Dialect, the rest here).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Param } from "../../../schemas/query.js";
import type { Engine, EngineConnection, ExecuteOptions, RowCursor, StatementResult, StreamOptions } from "../../../gateway/engines/engine.js";
import { engineForUrl } from "../../../gateway/engines/engine-for-url.js";
import { statementMode, type TextMode } from "../../../gateway/engines/engine-statement.js";
import { GatewayError } from "../../../gateway/errors.js";
import { waitFor } from "../../support/wait-for.js";
import type { Dialect } from "./core-suite.js";

/** What differs between the engines' SQL for this suite, beyond the core suite's Dialect. */
export interface EngineConnectionSql extends Pick<Dialect, "p" | "series"> {
  /** Answers the server's id of the session (the id `running` and `terminate` take), as one value. */
  sessionId: string;
  /** Runs on the server for this many seconds, then answers one row. */
  sleep(seconds: number): string;
  /** Creates the table `contract_items (id int primary key, name text-ish)` the suite writes to. */
  createItems: string;
  /** An INSERT into contract_items of (id, 'slow') that runs `seconds` on the server first. */
  slowInsert(id: number, seconds: number): string;
  /** A statement the server refuses to run inside a transaction block (it commits on its own). */
  outsideTransactionOnly: string;
  /**
   * Where the engine has deferred constraints: tables to create, and a write that succeeds as a
   * statement and fails at COMMIT (it must leave nothing written).
   */
  failsAtCommit?: { setup: string[]; write: string; count: string };
  /** A session setting the suite changes (`change`), and how to read it back as one value (`read`). */
  setting: { change: string; read: string };
  /** What differs for streamed statements. */
  stream: {
    /** A select list over the series' column g covering the value conversions (int8 and numeric, text, null, time, JSON...). */
    typed: string;
    /** A statement answering rows 1..`row - 1` (column g) and then failing on the server, of `rows` rows in all; the failure's code. */
    failsAt(row: number, rows: number): string;
    failure: { sqlstate: string; engineCode?: number };
    /**
     * A statement answering rows 1..`rows` in order (column g), each wide enough that a server which
     * buffers its output (MariaDB's 16 KiB net buffer) has sent the rows before the last one or two,
     * then running `seconds` on the server before its next row.
     */
    sleepsAfter(rows: number, seconds: number): string;
  };
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
  /** The engine reads a write's commit position in the write's own round trip (StatementMode.withCommitPosition). */
  positionWithWrite: boolean;
  /** A failed statement aborts the whole transaction (PostgreSQL), rather than undoing only itself (MySQL). */
  failedStatementAbortsTransaction: boolean;
  sql: EngineConnectionSql;
  setup(): Promise<EngineConnectionTarget>;
}

/** A statement's limits, and whether its commit position is wanted (its mode's withCommitPosition). */
type RunOptions = Partial<ExecuteOptions> & { withCommitPosition?: boolean };

const OPTIONS: ExecuteOptions = { timeoutMs: 20000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 1000 };
const STREAM_OPTIONS: StreamOptions = { timeoutMs: 20000, bigNumbers: "string", fetchRows: 7, maxRowBytes: 1 << 20 };
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

/** Every batch a cursor answers until its end (the empty batch that ends it is left out). */
async function batchesOf(cursor: RowCursor): Promise<unknown[][][]> {
  const batches: unknown[][][] = [];
  for (;;) {
    const rows = await cursor.next();
    if (rows.length === 0) return batches;
    batches.push(rows);
  }
}

/** The rows a stream answered before it failed, and its failure (from stream() itself or from a next()). */
async function readUntilFailure(opening: Promise<RowCursor>): Promise<{ rows: unknown[][]; failure: GatewayError }> {
  const rows: unknown[][] = [];
  const failure = await gatewayErrorOf(
    (async () => {
      const cursor = await opening;
      for (;;) {
        const batch = await cursor.next();
        if (batch.length === 0) return cursor.summary;
        rows.push(...batch);
      }
    })(),
  );
  return { rows, failure };
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
    /** A statement of `text` as Engine.statement makes it (autocommit, as written; its commit position wanted with withCommitPosition). */
    const run = (connection: EngineConnection, text: string, params: readonly Param[] = [], options: RunOptions = {}): Promise<StatementResult> => {
      const { withCommitPosition, ...limits } = options;
      return connection.execute(engine.statement(text, params, statementMode("as written", false, withCommitPosition === true)), { ...OPTIONS, ...limits });
    };
    const value = async (connection: EngineConnection, text: string, params: readonly Param[] = []): Promise<unknown> => (await run(connection, text, params)).rows[0]?.[0];
    const sessionIdOf = async (connection: EngineConnection): Promise<number> => Number(await value(connection, sql.sessionId));
    /** After a statement was stopped on the server: the same session answers the next one, and can be handed on after a reset. */
    const expectSessionGoesOn = async (connection: EngineConnection, sessionId: number): Promise<void> => {
      await waitFor(async () => !(await target.running(sessionId)), TIMEOUT_MS, "the server to stop the statement");
      expect(connection.alive).toBe(true);
      expect(await sessionIdOf(connection)).toBe(sessionId);
      await connection.reset(TIMEOUT_MS);
      expect(connection.needsReset).toBe(false);
      expect(await sessionIdOf(connection)).toBe(sessionId);
    };
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
      await expectSessionGoesOn(connection, sessionId);
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

    it("needs only its session locks released after plain reads, and that with a rollback after a transaction that set nothing", async () => {
      const connection = await connect();
      expect(connection.needsReset).toBe(false);
      await run(connection, "select 1");
      await run(connection, `select count(*) from contract_items where id = ${sql.p(1)}`, [1]);
      // Any statement may have taken a session-level lock the reader cannot see (a view, a trigger...).
      expect(connection.needsReset).toBe(true);
      expect(await connection.reset(TIMEOUT_MS)).toBe(false);
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
      // A write: a read the engine knows changes nothing (PostgreSQL's pg_sleep) answers CONNECTION_LOST.
      const pending = gatewayErrorOf(run(connection, sql.slowInsert(9301, 30)));
      await waitFor(() => target.running(sessionId), TIMEOUT_MS, "the statement to run");
      await target.terminate(sessionId);
      expect((await pending).code).toBe("OUTCOME_UNKNOWN");
      expect(connection.alive).toBe(false);
      expect(causes).toHaveLength(1);
    });

    describe("how the statement's mode sends its text (StatementMode.text)", () => {
      const TWO = "select 1; select 2";
      const inMode = (connection: EngineConnection, text: TextMode) => connection.execute(engine.statement(TWO, [], statementMode(text)), OPTIONS);

      it("sends a text of two statements as written, and in a gateway transaction while the session reads SQL as the reader does", async () => {
        const connection = await connect();
        expect(engine.statement(TWO).analysis.statementCount).toBe(2);
        await inMode(connection, "as written");
        await connection.begin({}, TIMEOUT_MS);
        await inMode(connection, "in gateway transaction");
        expect(connection.inTransaction).toBe(true);
        await connection.rollback(TIMEOUT_MS);
      });

      it("sends it as exactly one statement, which the server refuses, and the session goes on", async () => {
        const connection = await connect();
        expect((await gatewayErrorOf(inMode(connection, "one statement"))).code).toBe("DATABASE_ERROR");
        expect(String(await value(connection, "select 3"))).toBe("3");
      });
    });

    describe("writes that ask for their commit position (withCommitPosition)", () => {
      const WITH_POSITION = { withCommitPosition: true };
      const insert = `insert into contract_items (id, name) values (${sql.p(1)}, ${sql.p(2)})`;

      it("answers the write, and a position at or past its commit, leaving no transaction open", async () => {
        const connection = await connect();
        const observer = await connect();
        const before = await connection.commitPosition(TIMEOUT_MS);
        for (const id of [1, 2, 3]) {
          // The first run parses and describes the statement; the next ones bind the prepared one.
          const result = await run(connection, insert, [id, `n${id}`], WITH_POSITION);
          expect(result).toMatchObject({ command: "INSERT", rowCount: 1 });
          expect(connection.inTransaction).toBe(false);
          // Only the session locks to release: not the full reset, which would drop the prepared statement.
          expect(await connection.reset(TIMEOUT_MS)).toBe(false);
          expect(connection.needsReset).toBe(false);
          if (harness.positionWithWrite) {
            expect(result.commitPosition).toBeDefined();
            const position = result.commitPosition as string;
            expect(engine.isPosition(position)).toBe(true);
            if (before !== null) expect(engine.comparePositions(position, before)).toBeGreaterThan(0);
            const after = await observer.commitPosition(TIMEOUT_MS);
            expect(after).not.toBeNull();
            expect(engine.comparePositions(after as string, position)).toBeGreaterThanOrEqual(0);
          }
        }
        expect(await namesIn(observer)).toEqual(["n1", "n2", "n3"]);
        const updated = await run(connection, `update contract_items set name = ${sql.p(1)} where id > ${sql.p(2)}`, ["changed", 1], WITH_POSITION);
        expect(updated.rowCount).toBe(2);
        expect(await namesIn(observer)).toEqual(["n1", "changed", "changed"]);
      });

      it("leaves nothing written and no transaction open when the write fails, and the session goes on", async () => {
        const connection = await connect();
        await run(connection, insert, [1, "first"], WITH_POSITION);
        const duplicate = await gatewayErrorOf(run(connection, insert, [1, "again"], WITH_POSITION));
        expect(duplicate.code).toBe("DATABASE_ERROR");
        expect(connection.alive).toBe(true);
        expect(connection.inTransaction).toBe(false);
        const next = await run(connection, insert, [2, "second"], WITH_POSITION);
        expect(next.rowCount).toBe(1);
        if (harness.positionWithWrite) expect(next.commitPosition).toBeDefined();
        expect(await namesIn(connection)).toEqual(["first", "second"]);
      });

      it("fails a write to a table that does not exist, and runs the same text once it does", async () => {
        const connection = await connect();
        const text = `insert into contract_later (id) values (${sql.p(1)})`;
        await run(connection, "drop table if exists contract_later");
        expect((await gatewayErrorOf(run(connection, text, [1], WITH_POSITION))).code).toBe("DATABASE_ERROR");
        expect(connection.inTransaction).toBe(false);
        await run(connection, "create table contract_later (id int primary key)");
        try {
          const result = await run(connection, text, [1], WITH_POSITION);
          expect(result.rowCount).toBe(1);
          if (harness.positionWithWrite) expect(result.commitPosition).toBeDefined();
          expect(Number(await value(connection, "select count(*) from contract_later"))).toBe(1);
        } finally {
          await run(connection, "drop table contract_later");
        }
      });

      it("cancels a write whose timeout passes before it commits: nothing is written and the session goes on", async () => {
        const connection = await connect();
        const timedOut = await gatewayErrorOf(run(connection, sql.slowInsert(9, 30), [], { ...WITH_POSITION, timeoutMs: 300 }));
        expect(timedOut.code).toBe("STATEMENT_TIMEOUT");
        expect(connection.alive).toBe(true);
        expect(connection.inTransaction).toBe(false);
        expect(await namesIn(connection)).toEqual([]);
        expect((await run(connection, insert, [1, "after"], WITH_POSITION)).rowCount).toBe(1);
      });

      it("commits a transaction and answers the position after it (commitWithPosition)", async () => {
        const connection = await connect();
        const observer = await connect();
        const before = await observer.commitPosition(TIMEOUT_MS);
        await connection.begin({}, TIMEOUT_MS);
        await run(connection, insert, [1, "in a transaction"]);
        const { ended, position } = await connection.commitWithPosition(TIMEOUT_MS);
        expect(ended).toBe("committed");
        expect(connection.inTransaction).toBe(false);
        expect(await namesIn(observer)).toEqual(["in a transaction"]);
        if (harness.positionWithWrite) {
          expect(position).not.toBeNull();
          expect(engine.isPosition(position as string)).toBe(true);
          if (before !== null) expect(engine.comparePositions(position as string, before)).toBeGreaterThan(0);
        }
        if (position !== null) expect(engine.comparePositions((await observer.commitPosition(TIMEOUT_MS)) as string, position)).toBeGreaterThanOrEqual(0);
      });

      it("answers how a transaction with a failed statement ended, with no position when it rolled back", async () => {
        const connection = await connect();
        await run(connection, insert, [1, "before"]);
        await connection.begin({}, TIMEOUT_MS);
        await run(connection, insert, [2, "kept unless the transaction aborted"]);
        expect((await gatewayErrorOf(run(connection, insert, [1, "duplicate"]))).code).toBe("DATABASE_ERROR");
        const { ended, position } = await connection.commitWithPosition(TIMEOUT_MS);
        expect(connection.inTransaction).toBe(false);
        if (harness.failedStatementAbortsTransaction) {
          expect(ended).toBe("rolled back");
          expect(position).toBeNull();
          expect(await namesIn(connection)).toEqual(["before"]);
        } else {
          expect(ended).toBe("committed");
          expect(await namesIn(connection)).toEqual(["before", "kept unless the transaction aborted"]);
        }
      });

      it("runs a statement that must run outside a transaction block as it would without the option", async () => {
        const connection = await connect();
        const result = await run(connection, sql.outsideTransactionOnly, [], WITH_POSITION);
        expect(result.commitPosition).toBeUndefined();
        expect(connection.inTransaction).toBe(false);
      });

      // Only where the engine has deferred constraints (MySQL has none: the case does not exist there).
      const failing = sql.failsAtCommit;
      if (failing !== undefined) it("fails a write that its COMMIT refuses, with nothing written", async () => {
        const connection = await connect();
        for (const statement of failing.setup) await run(connection, statement);
        const refused = await gatewayErrorOf(run(connection, failing.write, [], WITH_POSITION));
        expect(refused.code).toBe("DATABASE_ERROR");
        expect(connection.inTransaction).toBe(false);
        expect(Number(await value(connection, failing.count))).toBe(0);
      });
    });

    describe("stream()", () => {
      const open = (connection: EngineConnection, text: string, params: readonly Param[] = [], options: Partial<StreamOptions> = {}): Promise<RowCursor> =>
        connection.stream(engine.statement(text, params), { ...STREAM_OPTIONS, ...options });

      it("answers the rows execute() answers, exactly, in batches of at most fetchRows, with the columns known before the first", async () => {
        const connection = await connect();
        const rows = STREAM_OPTIONS.fetchRows * 3 + 3;
        const statements: [string, Param[]][] = [
          [`select ${sql.stream.typed} from ${sql.series(rows)} order by g`, []],
          [`select ${sql.stream.typed} from ${sql.series(rows)} where g > ${sql.p(1)} order by g`, [2]],
        ];
        for (const bigNumbers of ["string", "number"] as const) {
          for (const [text, params] of statements) {
            const buffered = await run(connection, text, params, { bigNumbers });
            const cursor = await open(connection, text, params, { bigNumbers });
            expect(cursor.columns).toEqual(buffered.columns);
            expect(cursor.summary).toBeUndefined();
            const batches = await batchesOf(cursor);
            expect(batches.length).toBeGreaterThan(1);
            for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(STREAM_OPTIONS.fetchRows);
            expect(batches.flat()).toEqual(buffered.rows);
            expect(cursor.summary).toEqual({ command: buffered.command, rowCount: buffered.rowCount });
            // Past its end, a cursor answers nothing more, and closing it is a no-op.
            expect(await cursor.next()).toEqual([]);
            await cursor.close();
          }
        }
        expect(connection.alive).toBe(true);
      });

      it("ends an empty result at once, with its command and row count, as a write without rows too", async () => {
        const connection = await connect();
        const empty = await open(connection, `select g from ${sql.series(3)} where g > 5`);
        expect(empty.columns.map((column) => column.name)).toEqual(["g"]);
        expect(await empty.next()).toEqual([]);
        expect(empty.summary).toEqual({ command: "SELECT", rowCount: 0 });
        const write = await open(connection, "insert into contract_items (id, name) values (1, 'one'), (2, 'two')");
        expect(write.columns).toEqual([]);
        expect(await write.next()).toEqual([]);
        expect(write.summary).toEqual({ command: "INSERT", rowCount: 2 });
        expect(await namesIn(connection)).toEqual(["one", "two"]);
      });

      it("rejects next() with the mapped database error when the statement fails midway, and the session goes on", async () => {
        const connection = await connect();
        const sessionId = await sessionIdOf(connection);
        const { rows, failure } = await readUntilFailure(open(connection, sql.stream.failsAt(5000, 10000), [], { fetchRows: 100 }));
        // Rows came before the failure (so it reached next(), not stream()), each once, and none from the failing row on.
        const seen = rows.map((row) => Number(row[0]));
        expect(seen.length).toBeGreaterThan(0);
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen.every((g) => g < 5000)).toBe(true);
        expect(failure.code).toBe("DATABASE_ERROR");
        expect(failure.database?.sqlstate).toBe(sql.stream.failure.sqlstate);
        if (sql.stream.failure.engineCode !== undefined) expect(failure.database?.engineCode).toBe(sql.stream.failure.engineCode);
        expect(connection.alive).toBe(true);
        expect(await sessionIdOf(connection)).toBe(sessionId);
        expect(await connection.reset(TIMEOUT_MS)).toBe(false);
        expect(connection.needsReset).toBe(false);
      });

      it("stops the statement on the server when closed before its end, and the session answers the next statement", async () => {
        const connection = await connect();
        const sessionId = await sessionIdOf(connection);
        // Far more than the socket buffers hold, so the server is still at it when the caller leaves.
        const cursor = await open(connection, `select g, repeat('x', 1000) as pad from ${sql.series(90000)}`, [], { fetchRows: 10 });
        expect(await cursor.next()).toHaveLength(10);
        expect(await target.running(sessionId)).toBe(true);
        await cursor.close();
        await waitFor(async () => !(await target.running(sessionId)), TIMEOUT_MS, "the server to stop the streamed statement");
        expect(cursor.summary).toBeUndefined();
        expect(connection.alive).toBe(true);
        // Closing a plain read leaves nothing to undo but the session locks any statement may take: no full reset.
        expect(await connection.reset(TIMEOUT_MS)).toBe(false);
        expect(connection.needsReset).toBe(false);
        expect(await sessionIdOf(connection)).toBe(sessionId);
        expect((await run(connection, `select g from ${sql.series(3)} order by g`)).rows.map((row) => Number(row[0]))).toEqual([1, 2, 3]);
      });

      it("stops the statement when closed while a next() waits on it: that next() rejects, and the session goes on", async () => {
        const connection = await connect();
        const sessionId = await sessionIdOf(connection);
        // Two rows more than the first batch: that batch is surely sent before the server sleeps, and
        // the next() waits on the statement with one or two rows of its batch in.
        const cursor = await open(connection, sql.stream.sleepsAfter(12, 30), [], { fetchRows: 10 });
        expect((await cursor.next()).map((row) => Number(row[0]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        // The HTTP stream closes its cursor this way when its caller goes or its overall deadline passes.
        const pending = gatewayErrorOf(cursor.next());
        await waitFor(() => target.running(sessionId), TIMEOUT_MS, "the statement to run");
        await cursor.close();
        const stopped = await pending;
        expect(stopped.code).toBe("STATEMENT_TIMEOUT");
        expect(stopped.message).toContain("caller went away");
        await waitFor(async () => !(await target.running(sessionId)), TIMEOUT_MS, "the server to stop the statement");
        expect(connection.alive).toBe(true);
        await connection.reset(TIMEOUT_MS);
        expect(connection.needsReset).toBe(false);
        expect(await sessionIdOf(connection)).toBe(sessionId);
      });

      it("does not count the time a paused reader leaves the cursor idle against the statement's deadline", async () => {
        const connection = await connect();
        // Only the deadline's timers are faked: the clock jumps far past the timeout while the
        // cursor waits for its reader, and any deadline still armed then would fire its cancel.
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        try {
          const cursor = await open(connection, `select g from ${sql.series(30)} order by g`, [], { timeoutMs: 1000, fetchRows: 10 });
          const first = await cursor.next();
          vi.advanceTimersByTime(60000);
          const rest = await batchesOf(cursor);
          expect([first, ...rest].flat().map((row) => Number(row[0]))).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
          expect(cursor.summary).toEqual({ command: "SELECT", rowCount: 30 });
        } finally {
          vi.useRealTimers();
        }
        expect(connection.alive).toBe(true);
        expect(await connection.reset(TIMEOUT_MS)).toBe(false);
        expect(connection.needsReset).toBe(false);
      });

      it("times out a slow statement with STATEMENT_TIMEOUT and stops it on the server, before its first rows or between batches", async () => {
        const connection = await connect();
        const sessionId = await sessionIdOf(connection);
        const slow = await readUntilFailure(open(connection, sql.sleep(30), [], { timeoutMs: 200 }));
        expect(slow.failure.code).toBe("STATEMENT_TIMEOUT");
        await waitFor(async () => !(await target.running(sessionId)), TIMEOUT_MS, "the server to stop the statement");
        expect(connection.alive).toBe(true);

        // The first batch comes; the next() that waits on the slow row times out (its deadline restarted when it asked).
        const midway = await readUntilFailure(open(connection, sql.stream.sleepsAfter(12, 30), [], { timeoutMs: 300, fetchRows: 10 }));
        expect(midway.failure.code).toBe("STATEMENT_TIMEOUT");
        expect(midway.rows.map((row) => Number(row[0]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        await expectSessionGoesOn(connection, sessionId);
      });

      it("leaves needsReset as execute() leaves it after the same statement", async () => {
        // `expected`: what the rule gives; undefined where it is the engine's own reading of the statement
        // (MySQL counts sleep() as possibly leaving state, PostgreSQL knows pg_sleep leaves none).
        const cases: { text: string; inTransaction: boolean; expected?: boolean }[] = [
          // Any statement may have taken a session lock: true, but the reset below is not the full one.
          { text: `select g from ${sql.series(20)}`, inTransaction: false, expected: true },
          { text: `select g from ${sql.series(20)}`, inTransaction: true, expected: true },
          { text: sql.setting.change, inTransaction: false, expected: true },
          { text: sql.sleep(0), inTransaction: false },
        ];
        for (const { text, inTransaction, expected } of cases) {
          const executed = await connect();
          const streamed = await connect();
          if (inTransaction) {
            await executed.begin({}, TIMEOUT_MS);
            await streamed.begin({}, TIMEOUT_MS);
          }
          await run(executed, text);
          await batchesOf(await open(streamed, text));
          expect(streamed.needsReset).toBe(executed.needsReset);
          if (expected !== undefined) expect(streamed.needsReset).toBe(expected);
          expect(streamed.inTransaction).toBe(inTransaction);
          expect(await streamed.reset(TIMEOUT_MS)).toBe(await executed.reset(TIMEOUT_MS));
          expect(streamed.needsReset).toBe(false);
        }
      });
    });
  });
}
