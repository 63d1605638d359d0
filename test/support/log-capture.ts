/** A pino logger whose JSON lines are kept in memory, for tests that read what the gateway logs. */
import { Writable } from "node:stream";
import { pino } from "pino";
import type { Logger } from "../../gateway/logger.js";

export interface CapturedLogs {
  readonly logger: Logger;
  /** Every line written so far, in order. */
  readonly lines: string[];
}

export function captureLogs(level: string): CapturedLogs {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter((line) => line.length > 0));
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}
