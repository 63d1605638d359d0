/**
 * The naive gateway: the smallest HTTP server that parses {sql, params} and runs it through
 * `pg.Pool.query` (mode "pool") or a mysql2 pool (mode "mysql-pool"): what a team writes in an
 * afternoon, to compare with the gateway's own overhead; or (mode "echo") parses the request and
 * answers an empty result without a database: the HTTP round trip alone.
 *
 * Two more modes forward through the clients that pipeline: several statements in flight on one
 * connection, written together, so a database process wakes once for several of them. "postgres-js"
 * (postgres.js, named prepared statements) and "mariadb-pool" (the MariaDB connector, pipelining on).
 * They answer what pipelining, the one design change the gateway does not make (one statement per
 * session at a time), buys a forwarder on this machine with nothing else in the way.
 * Prints its port on stdout. Usage: naive-server.ts <pool | mysql-pool | postgres-js | mariadb-pool | echo> <url> <size>
 */
import http from "node:http";
import * as mariadb from "mariadb";
import mysql from "mysql2/promise";
import pg from "pg";
import postgres from "postgres";

const [mode, url = "", size = "10"] = process.argv.slice(2);
const connections = Number(size);

function runner(): (sql: string, params: unknown[]) => Promise<unknown[]> {
  if (mode === "pool") {
    const pool = new pg.Pool({ connectionString: url, max: connections });
    return async (sql, params) => (await pool.query(sql, params)).rows;
  }
  if (mode === "mysql-pool") {
    const pool = mysql.createPool({ uri: url, connectionLimit: connections });
    return async (sql, params) => (await pool.execute(sql, params as never[]))[0] as unknown[];
  }
  if (mode === "postgres-js") {
    const client = postgres(url, { max: connections, prepare: true, fetch_types: false, onnotice: () => undefined });
    return async (sql, params) => [...(await client.unsafe(sql, params as never[], { prepare: true }))];
  }
  if (mode === "mariadb-pool") {
    const parsed = new URL(url);
    const pool = mariadb.createPool({
      host: parsed.hostname,
      port: Number(parsed.port || 3306),
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      database: parsed.pathname.slice(1),
      connectionLimit: connections,
      pipelining: true,
    });
    return async (sql, params) => [...(await pool.execute<unknown[]>(sql, params))];
  }
  if (mode === "echo") return async () => [];
  throw new Error(`unknown mode ${mode}; expected pool, mysql-pool, postgres-js, mariadb-pool or echo`);
}

const run = runner();

const server = http.createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => {
    body += chunk.toString();
  });
  request.on("end", () => {
    const { sql, params } = JSON.parse(body) as { sql: string; params?: unknown[] };
    run(sql, params ?? []).then(
      (rows) => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ rows }));
      },
      (err: Error) => {
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: err.message }));
      },
    );
  });
});
server.keepAliveTimeout = 72000;
process.on("SIGINT", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
});
