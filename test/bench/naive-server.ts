/**
 * The comparison servers: the smallest HTTP server that parses {sql, params} and runs it through
 * `pg.Pool.query` (mode "pool": the naive gateway), or through a new `pg.Client` per request
 * (mode "client": a Lambda without a pool); "mysql-pool" and "mysql-client" do the same with mysql2.
 * Prints its port on stdout.
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
  if (mode === "mysql-client") {
    const connection = await mysql.createConnection({ uri: url });
    try {
      return (await connection.execute(sql, params as never[]))[0] as unknown[];
    } finally {
      await connection.end();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
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
