/** Structured JSON logging (pino). Never log credentials or parameter values. */
import { pino } from "pino";

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { service: "poolgate" },
      redact: { paths: ["url", "*.url", "password", "*.password"], censor: "***" },
    },
    // Written as each line is logged, never left in flight. pino's default stream writes behind the
    // process and flushes what is in flight when it exits; when nothing reads stdout any more (a
    // log collector that died, `npm start | head`), that exit-time flush retries the broken pipe
    // forever (sonic-boom's flushSync), and a drained gateway never exited. A line written now meets
    // the broken pipe at once: pino then stops logging, and the gateway exits as it should.
    pino.destination({ dest: 1, sync: true }),
  );
}

/** A logger that drops everything, for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: "silent" });
