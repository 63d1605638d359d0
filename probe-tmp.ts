import { engineForUrl } from "/work/main/gateway/engines/engine-for-url.js";
const engine = engineForUrl("postgres://postgres@127.0.0.1:5432/test", { preparedCacheSize: 64, cancelGraceMs: 1000, writingFunctions: [] });
const c = await engine.connect({ url: "postgres://postgres@127.0.0.1:5432/test" }, 5000);
const O = { timeoutMs: 5000, bigNumbers: "string" as const, maxResultBytes: 1 << 20, maxResultRows: 1000 };
const mode = process.argv[2];
for (let i = 0; i < 20000; i++) {
  if (mode === "inline") await c.execute("insert into pb_ins (payload) values ($1)", ["x"], { ...O, withCommitPosition: true });
  else await c.execute("insert into pb_ins (payload) values ($1)", ["x"], O);
}
await c.close();
