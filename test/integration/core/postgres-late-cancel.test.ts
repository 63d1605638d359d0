/**
 * A PostgreSQL CancelRequest signals the backend, not a statement: one sent as its statement answered
 * on its own (the deadline's timer ran before the answer was read, as on a loaded machine) would stop
 * whatever the session runs next, which then reads as the server's error (57014, DATABASE_ERROR) with
 * no deadline of its own passed. The gateway waits until the server has taken that cancel, while the
 * backend idles (and ignores it), before it answers the late statement and sends the next one.
 *
 * Made certain, not left to timing: the gateway reads nothing from the session's socket until the
 * moment its cancel goes out, so the statement's answer is always read after the cancel was sent.
 */
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Engine, EngineConnection, ExecuteOptions } from "../../../gateway/engines/engine.js";
import { engineForUrl } from "../../../gateway/engines/engine-for-url.js";
import { statementMode } from "../../../gateway/engines/engine-statement.js";
import { GatewayError } from "../../../gateway/errors.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const OPTIONS: ExecuteOptions = { timeoutMs: 20000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 1000 };
const TIMEOUT_MS = 10000;

/** The socket of the session under the engine connection (white box: the test holds back its reads). */
function socketOf(connection: EngineConnection): net.Socket {
  return (connection as unknown as { internals: { connection: { stream: net.Socket } } }).internals.connection.stream;
}

describe("a PostgreSQL statement that answered as its cancel went out", () => {
  let db: TestDatabase;
  let engine: Engine;
  const opened: EngineConnection[] = [];

  const run = (connection: EngineConnection, text: string, timeoutMs = OPTIONS.timeoutMs) =>
    connection.execute(engine.statement(text, [], statementMode("as written", false, false)), { ...OPTIONS, timeoutMs });

  beforeAll(async () => {
    db = await createTestDatabase();
    engine = engineForUrl(db.url, { preparedCacheSize: 8, cancelGraceMs: 5000, writingFunctions: [] });
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const connection of opened.splice(0)) await connection.close();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("answers STATEMENT_TIMEOUT, and its cancel never lands on the next statement of the session", async () => {
    const connection = await engine.connect({ url: db.url }, TIMEOUT_MS);
    opened.push(connection);
    const pid = Number((await run(connection, "select pg_backend_pid()")).rows[0]?.[0]);
    const socket = socketOf(connection);

    // The deadline passes with the answer unread; the gateway reads it the moment its cancel goes out.
    const connect = net.connect;
    const cancels = vi.spyOn(net, "connect").mockImplementation((...args: Parameters<typeof net.connect>) => {
      socket.resume();
      return connect(...args);
    });
    socket.pause();
    const late = await run(connection, "select 1", 1000).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(cancels).toHaveBeenCalledTimes(1);
    cancels.mockRestore();
    expect(late).toBeInstanceOf(GatewayError);
    expect((late as GatewayError).code).toBe("STATEMENT_TIMEOUT");
    // The late-answer path, not a cancel that stopped `select 1` itself.
    expect((late as GatewayError).message).toContain("the server answered after the cancel went out");

    // Runs its full second: a cancel landing on it would end it at once with 57014.
    const next = await run(connection, "select pg_sleep(1)::text as slept");
    expect(next.rows).toEqual([[""]]);
    expect(connection.alive).toBe(true);
    // No cancel is pending any more: the session is reset (never refused) for the next caller.
    await connection.reset(TIMEOUT_MS);
    expect(connection.needsReset).toBe(false);
    expect(Number((await run(connection, "select pg_backend_pid()")).rows[0]?.[0])).toBe(pid);
  });
});
