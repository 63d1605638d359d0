/**
 * Start-up as ECS sees it: the gateway process (gateway/main.ts, run as the image runs it but from
 * source) listens before its pools are warm, so /livez answers at once and /readyz says "starting"
 * while the database does not answer; it turns ready when the pools' warm-up bound
 * (pool.acquireTimeoutMs) has passed, warm or not. The database here is a black hole (accepts TCP,
 * never answers): an outage at start, simulated.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlackHole, startBlackHole } from "../../support/black-hole.js";
import { spawnWatched } from "../../support/process-output.js";
import { waitFor } from "../../support/wait-for.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
let hole: BlackHole;

beforeAll(async () => {
  hole = await startBlackHole();
});

afterAll(async () => {
  await hole?.close();
});

describe("the gateway's start-up with the database not answering", () => {
  it("listens at once, says live and starting, and turns ready once the pools' warm-up bound has passed", async () => {
    const config = {
      clusters: { default: { writerUrl: `postgres://poolgate:secret@127.0.0.1:${hole.port}/poolgate` } },
      pool: { acquireTimeoutMs: 15000 },
      server: { host: "127.0.0.1", port: 0 },
    };
    const { child, output: logged, exited } = spawnWatched(process.execPath, ["--import", "tsx", "gateway/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH, POOLGATE_CONFIG_JSON: JSON.stringify(config), LOG_LEVEL: "info" },
    });
    try {
      // Within the warm-up bound: listening, live, not ready.
      await waitFor(() => /listening on (http:\/\/[^"\s]+)/.test(logged()), 30000, "listening log line");
      const address = /listening on (http:\/\/[^"\s]+)/.exec(logged())?.[1];
      expect(logged()).not.toContain("poolgate ready");
      const live = await fetch(`${address}/livez`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ live: true });
      const starting = await fetch(`${address}/readyz`);
      expect(await starting.json()).toEqual({ ready: false, reason: "starting" });
      expect(starting.status).toBe(503);
      // After it: ready, though the pools are still cold (they keep retrying).
      await waitFor(async () => (await fetch(`${address}/readyz`)).status === 200, 60000, "/readyz 200 after the warm-up bound");
      expect(logged()).toContain("pool not warm yet; serving anyway and retrying");
      expect(logged()).toContain("poolgate ready");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 120000);
});
