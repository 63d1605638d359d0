/**
 * mysql2 publishes each statement on its diagnostics channels (`mysql2:query`, `mysql2:execute`), and
 * APM agents subscribe to them. With a subscriber, mysql2 adds its own listeners to every command the
 * gateway sends; the gateway delivers a command's events without listeners of its own
 * (command-events.ts). Both must hold together: the tracer sees every statement end or fail, and the
 * gateway's answers (buffered and streamed) are what they are without a tracer.
 */
import diagnostics from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../gateway/errors.js";
import { ENGINE_TEST_OPTIONS as OPTIONS, useMysqlEngineSession } from "../../support/mysql-engine-session.js";

interface Traced {
  started: string[];
  ended: string[];
  failed: string[];
}

/** Subscribes to mysql2's tracing channels as an APM agent does, until `stop`. */
function traceMysql2(): Traced & { stop(): void } {
  const traced: Traced = { started: [], ended: [], failed: [] };
  const subscriptions = ["mysql2:query", "mysql2:execute"].map((name) => {
    const channel = diagnostics.tracingChannel(name);
    const handlers = {
      start: (context: unknown) => traced.started.push((context as { query: string }).query),
      end: () => undefined,
      asyncStart: (context: unknown) => traced.ended.push((context as { query: string }).query),
      asyncEnd: () => undefined,
      error: (context: unknown) => traced.failed.push((context as { query: string }).query),
    };
    channel.subscribe(handlers);
    return () => channel.unsubscribe(handlers);
  });
  return { ...traced, stop: () => subscriptions.forEach((unsubscribe) => unsubscribe()) };
}

describe("the MySQL engine with mysql2's tracing channels subscribed (an APM agent)", () => {
  const session = useMysqlEngineSession(["create table traced (id int primary key, name varchar(20))"]);

  it("answers as without a tracer, and the tracer sees each statement end or fail", async () => {
    const connection = session.connection;
    const tracer = traceMysql2();
    try {
      const inserted = await connection.execute(session.statement("insert into traced (id, name) values (?, ?), (?, ?)", [1, "one", 2, "two"]), OPTIONS);
      expect(inserted).toMatchObject({ command: "INSERT", rowCount: 2 });
      const read = await connection.execute(session.statement("select id, name from traced where id >= ? order by id", [1]), OPTIONS);
      expect(read.rows).toEqual([
        [1, "one"],
        [2, "two"],
      ]);
      const text = await connection.execute(session.statement("select count(*) from traced", []), OPTIONS);
      expect(text.rows).toEqual([["2"]]);
      const refused = await connection.execute(session.statement("insert into traced (id, name) values (?, ?)", [1, "again"]), OPTIONS).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(GatewayError);
      expect((refused as GatewayError).code).toBe("DATABASE_ERROR");
      const missing = await connection.execute(session.statement("select * from no_such_table", []), OPTIONS).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((missing as GatewayError).code).toBe("DATABASE_ERROR");

      const cursor = await connection.stream(session.statement("select id, name from traced order by id", []), { timeoutMs: 20000, bigNumbers: "string", fetchRows: 1, maxRowBytes: 1 << 20 });
      const streamed: unknown[][] = [];
      for (let batch = await cursor.next(); batch.length > 0; batch = await cursor.next()) streamed.push(...batch);
      expect(streamed).toEqual(read.rows);
      expect(cursor.summary).toEqual({ command: "SELECT", rowCount: 2 });

      const ours = (queries: string[]) => queries.filter((query) => /traced|no_such_table/.test(query));
      expect(ours(tracer.started)).toHaveLength(6);
      expect(ours(tracer.ended)).toHaveLength(6);
      expect(ours(tracer.failed).map((query) => query.includes("no_such_table") || query.includes("insert"))).toEqual([true, true]);
      expect(connection.alive).toBe(true);
    } finally {
      tracer.stop();
    }
    // And without the tracer, the same session answers as before.
    expect((await connection.execute(session.statement("select name from traced where id = ?", [2]), OPTIONS)).rows).toEqual([["two"]]);
  });
});
