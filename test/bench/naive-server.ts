/**
 * The naive gateway: the smallest HTTP server that parses {sql, params} and runs it through
 * `pg.Pool.query` (mode "pool") or a mysql2 pool (mode "mysql-pool"): what a team writes in an
 * afternoon, to compare with the gateway's own overhead; or (mode "echo") parses the request and
 * answers an empty result without a database: the HTTP round trip alone. Prints its port on stdout.
 * Usage: naive-server.ts <pool | mysql-pool | echo> <url> <size>
 */
import http from "node:http";
import mysql from "mysql2/promise";
import pg from "pg";

const [mode, url, size] = process.argv.slice(2);
const pool = mode === "pool" ? new pg.Pool({ connectionString: url, max: Number(size ?? 10) }) : undefined;
const mysqlPool = mode === "mysql-pool" ? mysql.createPool({ uri: url, connectionLimit: Number(size ?? 10) }) : undefined;

async function run(sql: string, params: unknown[]): Promise<unknown[]> {
  if (pool) return (await pool.query(sql, params)).rows;
  if (mysqlPool) return (await mysqlPool.execute(sql, params as never[]))[0] as unknown[];
  if (mode === "echo") return [];
  throw new Error(`unknown mode ${mode}; expected pool, mysql-pool or echo`);
}

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
