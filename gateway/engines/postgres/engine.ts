/**
 * The PostgreSQL engine: opens `pg` sessions configured the way the value conversions expect, with
 * the cluster's credentials source and TLS (when configured) in place of what the URL says.
 */
import { createSecureContext } from "node:tls";
import pg from "pg";
import { connectAuthenticated } from "../../credentials/authenticated-connect.js";
import type { DatabaseAccess } from "../../credentials/database-access.js";
import { type DatabaseLogin, sessionTargetOf } from "../../credentials/database-credentials.js";
import type { DatabaseTls } from "../../credentials/tls-options.js";
import type { Param } from "../../../schemas/query.js";
import type { Engine, EngineConnection, EngineEndpoint } from "../engine.js";
import { type EngineStatement, type StatementMode, statementOf } from "../engine-statement.js";
import type { SqlReader } from "../sql-analysis.js";
import { PostgresConnection } from "./connection.js";
import { postgresDataApiDialect } from "./data-api-dialect.js";
import { postgresIdempotencySql } from "./idempotency-sql.js";
import type { IdempotencySql } from "../idempotency-sql.js";
import { FunctionVolatility } from "./function-volatility.js";
import { postgresSqlReader } from "./sql-reader.js";
import { describeConnectError, isAuthenticationFailure } from "./errors.js";
import { compareLsn, isLsn } from "./lsn.js";
import { comparePositionsWithTime, isTimePosition } from "../aurora-time-position.js";
import type { PositionKnowledge } from "./aurora-time-position.js";
import { STARTUP_OPTIONS } from "./session-settings.js";
import { BUILTIN_TYPE_NAMES } from "./values.js";

export interface PostgresEngineSettings extends DatabaseAccess {
  preparedCacheSize: number;
  cancelGraceMs: number;
  writingFunctions?: readonly string[] | undefined;
}

/** `pg`'s ssl option for a TLS setting; built once per engine, so the CA bundle is parsed once. */
export function pgSslOptions(tls: DatabaseTls): pg.ClientConfig["ssl"] {
  if (tls.mode === "disable") return false;
  if (tls.mode === "require") return { rejectUnauthorized: false };
  // Without a bundle, Node's own store (and NODE_EXTRA_CA_CERTS) is the trust; pg checks the host name
  // against the certificate (servername, or the IP address for IP hosts).
  return tls.ca === undefined ? { rejectUnauthorized: true } : { rejectUnauthorized: true, secureContext: createSecureContext({ ca: tls.ca }) };
}

/**
 * The URL with a login in place of its user and password. `pg` lets the connection string win over
 * separate fields, so the login goes into the string (encoded, as pg-connection-string decodes it).
 */
export function withLogin(url: string, login: DatabaseLogin | undefined): string {
  if (login === undefined) return url;
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(login.user);
  parsed.password = encodeURIComponent(login.password);
  return parsed.toString();
}

/** Until a session is handed to PostgresConnection, an 'error' event must not crash the process. */
const ignoreEarlyError = (): void => undefined;

export class PostgresEngine implements Engine {
  readonly kind = "postgres" as const;
  readonly reader: SqlReader;
  readonly dataApi = postgresDataApiDialect;
  readonly idempotency: IdempotencySql;
  /** What pg_proc says of called functions, shared by the cluster's sessions. */
  private readonly volatility = new FunctionVolatility();
  private readonly typeNames = new Map(BUILTIN_TYPE_NAMES);
  private connectionCounter = 0;
  /** Where the cluster's positions come from, learnt by the first inspection (aurora-time-position.ts). */
  private readonly positions: PositionKnowledge = { source: undefined, refusal: undefined };
  /** undefined: the URL decides (sslmode), as without a tls setting. */
  private readonly ssl: pg.ClientConfig["ssl"] | undefined;

  constructor(private readonly settings: PostgresEngineSettings) {
    this.ssl = settings.tls === undefined ? undefined : pgSslOptions(settings.tls);
    this.reader = postgresSqlReader(settings.writingFunctions);
    this.idempotency = postgresIdempotencySql(settings.flavour);
  }

  statement(sql: string, params?: readonly Param[], mode?: StatementMode): EngineStatement {
    return statementOf(this.reader, sql, params, mode);
  }

  async connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection> {
    const client = await connectAuthenticated({
      credentials: endpoint.credentials ?? this.settings.credentials,
      target: sessionTargetOf(endpoint.url),
      timeoutMs: connectTimeoutMs,
      open: (login, timeoutMs) => this.open(endpoint, login, timeoutMs),
      isAuthenticationFailure,
      describe: describeConnectError,
    });
    const connection = new PostgresConnection(++this.connectionCounter, client, {
      preparedCacheSize: this.settings.preparedCacheSize,
      cancelGraceMs: this.settings.cancelGraceMs,
      typeNames: this.typeNames,
      volatility: this.volatility,
      flavour: this.settings.flavour,
      positions: this.positions,
    });
    client.off("error", ignoreEarlyError);
    return connection;
  }

  private async open(endpoint: EngineEndpoint, login: DatabaseLogin | undefined, connectTimeoutMs: number): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: withLogin(endpoint.url, login),
      ...(this.ssl === undefined ? {} : { ssl: this.ssl }),
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      application_name: endpoint.purpose === "monitor" ? "poolgate-monitor" : "poolgate",
      // The settings the value conversions and the SQL reader assume; Aurora DSQL sessions are checked
      // for them instead (PostgresConnection.inspect), since DSQL refuses settings it does not support.
      ...(this.settings.flavour === "aurora-dsql" ? {} : { options: STARTUP_OPTIONS }),
    });
    client.on("error", ignoreEarlyError);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /** WAL positions, or Aurora's time positions; one of each form is never "applied" (a token from before a change of form). */
  comparePositions(a: string, b: string): number {
    return comparePositionsWithTime(a, b, compareLsn);
  }

  isPosition(text: string): boolean {
    return isLsn(text) || isTimePosition(text);
  }

  describeConnectError(err: unknown): string {
    return describeConnectError(err);
  }
}
