/**
 * The MySQL engine (MySQL, MariaDB, Aurora MySQL): opens `mysql2` sessions configured the way the
 * value conversions expect, tells MariaDB from MySQL by the server's handshake, and stops timed-out
 * statements with KILL QUERY from a short side session to the same instance.
 */
import mysql, { type Connection, type ConnectionOptions } from "mysql2";
import type { Engine, EngineConnection, EngineEndpoint } from "../engine.js";
import { type MysqlFlavour, MysqlConnection } from "./connection.js";
import { describeConnectError } from "./errors.js";
import { compareGtidPositions, isGtidPosition } from "./gtid.js";

export interface MysqlEngineSettings {
  preparedCacheSize: number;
  cancelGraceMs: number;
}

/**
 * UTC sessions, so TIMESTAMP values come back in UTC and are marked "Z"; and the URL's database again
 * (COM_RESET_CONNECTION keeps whatever a caller's USE chose).
 */
function sessionSetup(database: string | undefined): string {
  const timeZone = "SET time_zone = '+00:00'";
  return database ? `${timeZone}; USE \`${database.replace(/`/g, "``")}\`` : timeZone;
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
  private connectionCounter = 0;

  constructor(private readonly settings: MysqlEngineSettings) {}

  async connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection> {
    const base = connectionOptions(endpoint.url);
    // The monitor reads only global state: without a default database it never shows up among the
    // sessions working on the application's database.
    const connection = await open({
      ...base,
      database: endpoint.purpose === "monitor" ? undefined : base.database,
      connectTimeout: connectTimeoutMs,
      charset: "utf8mb4",
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      dateStrings: true,
      jsonStrings: true,
      rowsAsArray: true,
      multipleStatements: true,
      enableKeepAlive: true,
      maxPreparedStatements: Math.max(this.settings.preparedCacheSize, 1),
      connectAttributes: { program_name: endpoint.purpose === "monitor" ? "poolgate-monitor" : "poolgate" },
    });
    const handshake = connection as unknown as { _isMariaDB?: boolean; serverVersion?: string };
    const flavour: MysqlFlavour = handshake._isMariaDB || /mariadb/i.test(handshake.serverVersion ?? "") ? "mariadb" : "mysql";
    const session = new MysqlConnection(++this.connectionCounter, connection, {
      flavour,
      cancelGraceMs: this.settings.cancelGraceMs,
      sessionSetup: sessionSetup(endpoint.purpose === "monitor" ? undefined : base.database),
      killQuery: (host, port, threadId, timeoutMs) => this.killQuery({ ...base, host, port }, threadId, timeoutMs),
    });
    try {
      await session.setUpSession(connectTimeoutMs);
    } catch (err) {
      session.destroy();
      throw err;
    }
    return session;
  }

  /** KILL QUERY from a side session: stops the statement, keeps the session. */
  private async killQuery(options: ConnectionOptions, threadId: number, timeoutMs: number): Promise<void> {
    const side = await open({ ...options, connectTimeout: timeoutMs });
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

  comparePositions(a: string, b: string): number {
    return compareGtidPositions(a, b);
  }

  isPosition(text: string): boolean {
    return isGtidPosition(text);
  }

  describeConnectError(err: unknown): string {
    return describeConnectError(err);
  }
}
