/** The PostgreSQL engine: opens `pg` sessions configured the way the value conversions expect. */
import pg from "pg";
import type { Engine, EngineConnection, EngineEndpoint } from "../engine.js";
import { PostgresConnection } from "./connection.js";
import { describeConnectError } from "./errors.js";
import { compareLsn, isLsn } from "./lsn.js";
import { BUILTIN_TYPE_NAMES } from "./values.js";

export interface PostgresEngineSettings {
  preparedCacheSize: number;
  cancelGraceMs: number;
}

export class PostgresEngine implements Engine {
  readonly kind = "postgres" as const;
  private readonly typeNames = new Map(BUILTIN_TYPE_NAMES);
  private connectionCounter = 0;

  constructor(private readonly settings: PostgresEngineSettings) {}

  async connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection> {
    const client = new pg.Client({
      connectionString: endpoint.url,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      application_name: endpoint.purpose === "monitor" ? "poolgate-monitor" : "poolgate",
      // Timestamps are converted to ISO-8601 from the ISO DateStyle; UTC keeps offsets uniform.
      options: "-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres",
    });
    // Until the session is handed to PostgresConnection, an 'error' event must not crash the process.
    const early = (): void => undefined;
    client.on("error", early);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    client.off("error", early);
    return new PostgresConnection(++this.connectionCounter, client, {
      preparedCacheSize: this.settings.preparedCacheSize,
      cancelGraceMs: this.settings.cancelGraceMs,
      typeNames: this.typeNames,
    });
  }

  comparePositions(a: string, b: string): number {
    return compareLsn(a, b);
  }

  isPosition(text: string): boolean {
    return isLsn(text);
  }

  describeConnectError(err: unknown): string {
    return describeConnectError(err);
  }
}
