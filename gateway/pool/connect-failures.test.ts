import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConnectFailureLog } from "./connect-failures.js";

function capture() {
  const lines: { level: number; msg: string; failures?: number; downForMs?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

const WARN = 40;
const INFO = 30;

describe("connect failure log", () => {
  it("warns once when connecting starts to fail, counts the rest, and says when it works again", () => {
    const { logger, lines } = capture();
    let now = 0;
    const log = new ConnectFailureLog("cluster/writer", logger, () => now);
    // Ten attempts a second for five seconds: a dead endpoint retried with backoff.
    for (let i = 0; i < 50; i++) {
      log.failed("connect ECONNREFUSED");
      now += 100;
    }
    expect(lines.map((line) => [line.level, line.msg])).toEqual([[WARN, expect.stringMatching(/^connect failed/) as unknown]]);
    log.connected();
    expect(lines.at(-1)).toMatchObject({ level: INFO, msg: "connected again", failures: 50, downForMs: 5000 });
    log.connected();
    expect(lines).toHaveLength(2);
  });

  it("reminds once a minute while the endpoint stays down, with the count", () => {
    const { logger, lines } = capture();
    let now = 0;
    const log = new ConnectFailureLog("cluster/writer", logger, () => now);
    for (let i = 0; i < 1300; i++) {
      log.failed("connect ECONNREFUSED");
      now += 100;
    }
    const reminders = lines.filter((line) => line.msg === "still cannot connect");
    expect(reminders.map((line) => line.failures)).toEqual([601, 1201]);
    expect(lines.every((line) => line.level <= WARN)).toBe(true);
  });
});
