/**
 * The MySQL engine (MySQL, MariaDB, Aurora MySQL): opens `mysql2` sessions configured the way the
 * value conversions expect, with the cluster's credentials source and TLS when configured, tells
 * MariaDB from MySQL by the server's handshake, and stops timed-out statements with KILL QUERY from a
 * short side session to the same instance.
 */
import net from "node:net";
import mysql, { type Connection, type ConnectionOptions, type SslOptions } from "mysql2";
import { connectAuthenticated } from "../../credentials/authenticated-connect.js";
import type { DatabaseAccess } from "../../credentials/database-access.js";
import type { DatabaseCredentials, DatabaseLogin, SessionTarget } from "../../credentials/database-credentials.js";
import type { DatabaseTls } from "../../credentials/tls-options.js";
import type { Param } from "../../../schemas/query.js";
import type { Engine, EngineConnection, EngineEndpoint } from "../engine.js";
import { type EngineStatement, type StatementMode, statementOf } from "../engine-statement.js";
import type { SqlReader } from "../sql-analysis.js";
import { type MysqlFlavour, MysqlConnection } from "./connection.js";
import { mysqlDataApiDialect } from "./data-api-dialect.js";
import { mysqlIdempotencySql } from "./idempotency-sql.js";
import { mysqlSqlReader } from "./sql-reader.js";
import { describeConnectError, isAuthenticationFailure } from "./errors.js";
import { compareGtidPositions, isGtidPosition } from "./gtid.js";
import type { AuroraKnowledge } from "./aurora-sql.js";
import { comparePositionsWithTime, isTimePosition } from "../aurora-time-position.js";

export interface MysqlEngineSettings extends DatabaseAccess {
  preparedCacheSize: number;
  cancelGraceMs: number;
  writingFunctions?: readonly string[] | undefined;
}

/**
 * UTC sessions, so TIMESTAMP values come back in UTC and are marked "Z"; and the URL's database again
 * (COM_RESET_CONNECTION keeps whatever a caller's USE chose).
 */
/**
 * What every session runs after connecting and after each reset: UTC, the application's database, and
 * on MariaDB the tracking of `last_gtid` (as MaxScale's causal reads do), so that the OK packet of a
 * write carries the GTID its consistency token is (connection.ts) and no second round trip reads it.
 */
function sessionSetup(database: string | undefined, flavour: MysqlFlavour): string {
  const parts = ["SET time_zone = '+00:00'"];
  if (flavour === "mariadb") parts.push("SET SESSION session_track_system_variables = CONCAT_WS(',', @@session.session_track_system_variables, 'last_gtid')");
  if (database) parts.push(`USE \`${database.replace(/`/g, "``")}\``);
  return parts.join("; ");
}

/** mysql://user:password@host:port/database -> mysql2 options (credentials decoded, never logged). */
export function connectionOptions(url: string): ConnectionOptions {
  const parsed = new URL(url);
  const options: ConnectionOptions = {
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username) || "root",
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || undefined,
  };
  const socketPath = parsed.searchParams.get("socket");
  if (socketPath) options.socketPath = socketPath;
  return options;
}

/**
 * mysql2's ssl option for a TLS setting (undefined: plain TCP). Built once per engine: mysql2 keeps
 * one TLS context per options object, so the CA bundle is parsed once.
 */
export function mysqlSslOptions(tls: DatabaseTls | undefined): SslOptions | undefined {
  if (tls === undefined || tls.mode === "disable") return undefined;
  if (tls.mode === "require") return { rejectUnauthorized: false, verifyIdentity: false };
  // Without a bundle, Node's own store (and NODE_EXTRA_CA_CERTS) is the trust.
  return tls.ca === undefined ? { rejectUnauthorized: true, verifyIdentity: true } : { rejectUnauthorized: true, verifyIdentity: true, ca: tls.ca };
}

/**
 * The login part of a session's options (none: the URL's). An IAM token must reach the server as
 * is, through the `mysql_clear_password` plugin that Aurora asks for; mysql2 refuses that plugin
 * unless it is given, so every other login can never go out in clear text.
 */
export function loginOptions(login: DatabaseLogin | undefined, kind: DatabaseCredentials["kind"] | undefined): ConnectionOptions {
  if (login === undefined) return {};
  const options: ConnectionOptions = { user: login.user, password: login.password };
  if (kind === "iam-token") {
    const answer = Buffer.from(`${login.password}\0`);
    options.authPlugins = { mysql_clear_password: () => () => answer };
  }
  return options;
}

function open(options: ConnectionOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const connection = mysql.createConnection(options);
    const onError = (err: Error): void => {
      connection.removeListener("connect", onConnect);
      (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
      reject(err);
    };
    const onConnect = (): void => {
      connection.removeListener("error", onError);
      resolve(connection);
    };
    connection.once("error", onError);
    connection.once("connect", onConnect);
  });
}

export class MysqlEngine implements Engine {
  readonly kind = "mysql" as const;
  readonly reader: SqlReader;
  readonly dataApi = mysqlDataApiDialect;
  readonly idempotency = mysqlIdempotencySql;
  private connectionCounter = 0;
  /** Whether the cluster is Aurora MySQL, learnt by the first session that asks (aurora-sql.ts). */
  private readonly aurora: AuroraKnowledge = { aurora: undefined };
  private readonly ssl: SslOptions | undefined;

  constructor(private readonly settings: MysqlEngineSettings) {
    this.ssl = mysqlSslOptions(settings.tls);
    const logins = [settings.credentials, ...(settings.logins?.values() ?? [])];
    if (logins.some((login) => login?.kind === "iam-token") && this.ssl === undefined) {
      throw new Error("IAM authentication tokens are sent in clear text (mysql_clear_password): the cluster needs tls mode require or verify-full");
    }
    this.reader = mysqlSqlReader(settings.writingFunctions);
  }

  statement(sql: string, params?: readonly Param[], mode?: StatementMode): EngineStatement {
    return statementOf(this.reader, sql, params, mode);
  }

  async connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection> {
    const base = connectionOptions(endpoint.url);
    const target: SessionTarget = { host: base.host ?? "127.0.0.1", port: base.port ?? 3306 };
    // The monitor reads only global state: without a default database it never shows up among the
    // sessions working on the application's database.
    const credentials = endpoint.credentials ?? this.settings.credentials;
    const connection = await this.openAuthenticated(credentials, target, connectTimeoutMs, (security, timeoutMs) => ({
      ...base,
      ...security,
      database: endpoint.purpose === "monitor" ? undefined : base.database,
      connectTimeout: timeoutMs,
      charset: "utf8mb4",
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      dateStrings: true,
      jsonStrings: true,
      rowsAsArray: true,
      multipleStatements: true,
      // LOAD DATA LOCAL would have the server ask the gateway for a file of its own machine: never.
      flags: ["-LOCAL_FILES"],
      enableKeepAlive: true,
      maxPreparedStatements: Math.max(this.settings.preparedCacheSize, 1),
      connectAttributes: { program_name: endpoint.purpose === "monitor" ? "poolgate-monitor" : "poolgate" },
    }));
    const handshake = connection as unknown as { _isMariaDB?: boolean; serverVersion?: string };
    const flavour: MysqlFlavour = handshake._isMariaDB || /mariadb/i.test(handshake.serverVersion ?? "") ? "mariadb" : "mysql";
    const session = new MysqlConnection(++this.connectionCounter, connection, {
      flavour,
      cancelGraceMs: this.settings.cancelGraceMs,
      sessionSetup: sessionSetup(endpoint.purpose === "monitor" ? undefined : base.database, flavour),
      // The same login: a user may stop its own statements without any privilege.
      killQuery: (host, port, threadId, timeoutMs) => this.killQuery(credentials, base, target, { host, port }, threadId, timeoutMs),
      aurora: this.aurora,
    });
    try {
      await session.setUpSession(connectTimeoutMs);
      if (endpoint.purpose !== "monitor") await session.noteInitialRole(connectTimeoutMs);
    } catch (err) {
      session.destroy();
      throw err;
    }
    return session;
  }

  /** Opens a session with a login (none: the URL's) and the cluster's TLS (`options` adds them to the rest). */
  private openAuthenticated(
    credentials: DatabaseCredentials | undefined,
    target: SessionTarget,
    timeoutMs: number,
    options: (security: ConnectionOptions, timeoutMs: number) => ConnectionOptions,
  ): Promise<Connection> {
    return connectAuthenticated({
      credentials,
      target,
      timeoutMs,
      open: (login, remainingMs) => {
        const security: ConnectionOptions = { ...loginOptions(login, credentials?.kind), ...(this.ssl === undefined ? {} : { ssl: this.ssl }) };
        return open(options(security, remainingMs));
      },
      isAuthenticationFailure,
      describe: describeConnectError,
    });
  }

  /**
   * KILL QUERY from a side session: stops the statement, keeps the session. The side session goes to
   * the instance's address (`peer`), where the statement runs even if the endpoint's name has moved
   * since; it still presents the endpoint's name, which the certificate and an IAM token are for.
   */
  private async killQuery(
    credentials: DatabaseCredentials | undefined,
    base: ConnectionOptions,
    target: SessionTarget,
    peer: SessionTarget,
    threadId: number,
    timeoutMs: number,
  ): Promise<void> {
    const side = await this.openAuthenticated(credentials, target, timeoutMs, (security, remainingMs) => ({
      ...base,
      ...security,
      connectTimeout: remainingMs,
      ...(base.socketPath === undefined ? { stream: () => net.connect({ host: peer.host, port: peer.port }) } : {}),
    }));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("KILL QUERY got no answer")), timeoutMs);
        // The thread id is an integer from the server's own handshake, so it is safe to inline.
        side.query(`KILL QUERY ${Number(threadId)}`, (err) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        });
      });
    } finally {
      side.destroy();
    }
  }

  /** GTID positions, or Aurora MySQL's time positions (its readers have no GTIDs). */
  comparePositions(a: string, b: string): number {
    return comparePositionsWithTime(a, b, compareGtidPositions);
  }

  isPosition(text: string): boolean {
    return isGtidPosition(text) || isTimePosition(text);
  }

  describeConnectError(err: unknown): string {
    return describeConnectError(err);
  }
}
