/**
 * A temporary PostgreSQL server that asks for passwords (scram-sha-256), and only over TLS: its
 * pg_hba.conf has `hostssl` lines and no `host` ones, and its certificate comes from a test CA
 * (test-certificates.ts). It listens on 127.0.0.1 and 127.0.0.2 (a loopback address the certificate
 * does not name) on a free port; the tests' own administration goes through its Unix socket with
 * trust. Started from the PostgreSQL binaries as pg-topology.ts does; `stop()` removes everything.
 */
import { appendFileSync, chmodSync, chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { pgCommand } from "./pg-topology.js";
import { unusedPort } from "./ports.js";
import { runningAsRoot, tempDirFor } from "./server-group.js";
import { makeTestCertificates, type TestCertificates } from "./test-certificates.js";
import { grantScript, statementsOf } from "./database-logins.js";

export interface PasswordServer {
  readonly port: number;
  readonly certificates: TestCertificates;
  /** postgres://user:password@host:port/postgres (user and password encoded); host default 127.0.0.1. */
  url(user: string, password?: string, host?: string): string;
  /** Runs SQL as the superuser over the Unix socket. */
  admin<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  /** A role that may log in with this password. */
  createRole(name: string, password: string): Promise<void>;
  setPassword(role: string, password: string): Promise<void>;
  /** How many logins of `role` the server has refused so far (from its log). */
  refusedLogins(role: string): number;
  stop(): Promise<void>;
}

function ownByPostgres(path: string, mode: number): void {
  chmodSync(path, mode);
  if (!runningAsRoot) return;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  chownSync(path, id("-u"), id("-g"));
}

/**
 * `idempotencyTableForAll`: make the gateway's idempotency table with the documented grant script's own
 * statements and let every login use it (for tests about how a login reaches the server, whose logins
 * may not create it; the gateway refuses to start without a usable one).
 */
export async function startPasswordServer(options: { idempotencyTableForAll?: boolean } = {}): Promise<PasswordServer> {
  const root = tempDirFor("postgres", "poolgate-pwd-");
  const dataDir = join(root, "data");
  const certDir = join(root, "certs");
  let started = false;
  const stop = async () => {
    if (started) await pgCommand("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    mkdirSync(certDir);
    const certificates = await makeTestCertificates(certDir);
    ownByPostgres(certDir, 0o755);
    ownByPostgres(certificates.serverCertFile, 0o644);
    // PostgreSQL refuses a key others may read.
    ownByPostgres(certificates.serverKeyFile, 0o600);
    const port = await unusedPort();
    await pgCommand("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
    appendFileSync(
      join(dataDir, "postgresql.conf"),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1,127.0.0.2'",
        `unix_socket_directories = '${root}'`,
        "ssl = on",
        `ssl_cert_file = '${certificates.serverCertFile}'`,
        `ssl_key_file = '${certificates.serverKeyFile}'`,
        "password_encryption = 'scram-sha-256'",
        "fsync = off",
        "full_page_writes = off",
        "shared_buffers = '16MB'",
        "max_connections = 60",
        "logging_collector = off",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dataDir, "pg_hba.conf"), "local all all trust\nhostssl all all 127.0.0.0/8 scram-sha-256\n");
    await pgCommand("pg_ctl", ["-D", dataDir, "-l", join(dataDir, "server.log"), "-w", "-t", "60", "start"]);
    started = true;

    const admin = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const client = new pg.Client({ host: root, port, user: "postgres", database: "postgres" });
      await client.connect();
      try {
        return (await client.query<T>(sql, params)).rows;
      } finally {
        await client.end();
      }
    };
    if (options.idempotencyTableForAll === true) {
      for (const statement of statementsOf(grantScript("postgres"))) {
        if (/poolgate(?!_)/.test(statement) && !/poolgate_r[wo]/.test(statement)) await admin(statement);
      }
      await admin("GRANT USAGE ON SCHEMA poolgate TO PUBLIC; GRANT SELECT, INSERT, UPDATE, DELETE ON poolgate.idempotency_keys TO PUBLIC");
    }
    const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;
    const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
    return {
      port,
      certificates,
      url: (user, password, host = "127.0.0.1") =>
        `postgres://${encodeURIComponent(user)}${password === undefined ? "" : `:${encodeURIComponent(password)}`}@${host}:${port}/postgres`,
      admin,
      createRole: async (name, password) => {
        await admin(`CREATE ROLE ${ident(name)} LOGIN PASSWORD ${quote(password)}`);
      },
      setPassword: async (role, password) => {
        await admin(`ALTER ROLE ${ident(role)} PASSWORD ${quote(password)}`);
      },
      refusedLogins: (role) =>
        readFileSync(join(dataDir, "server.log"), "utf8").split("\n").filter((line) => line.includes(`password authentication failed for user "${role}"`)).length,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
