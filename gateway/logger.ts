/** Structured JSON logging (pino). Never log credentials or parameter values. */
import { pino } from "pino";

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "poolgate" },
    redact: { paths: ["url", "*.url", "password", "*.password"], censor: "***" },
  });
}

/** A logger that drops everything, for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: "silent" });
