// Child process that serves the embedded PostgreSQL (PGlite) on a unix socket, so that a slow query
// never blocks the gateway's event loop. Plain JavaScript: it runs under bare `node`.
// argv: <dataDir> <socketPath>. Reports {listening: true} over IPC; exits when the parent goes away.
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const [dataDir, socketPath] = process.argv.slice(2);
const db = await PGlite.create(dataDir);
// One connection: PGlite is a single session, and multiplexing would interleave transactions.
const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 1 });
await server.start();
process.send?.({ listening: true });

async function shutdown() {
  await server.stop().catch(() => undefined);
  await db.close().catch(() => undefined);
  process.exit(0);
}
process.on("disconnect", shutdown);
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
