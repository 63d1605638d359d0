/**
 * Simulates a session lost during COMMIT, which a real server cannot be made to do on demand: a TCP
 * forwarder in front of the database that, once armed, watches what the gateway sends and, at the
 * first `COMMIT` (the text of a simple query, PostgreSQL's Query message or MySQL's COM_QUERY), cuts
 * the session either after delivering it ("after": the server commits, the answer is lost) or instead
 * of delivering it ("before": the server never sees it and rolls back). Either way the gateway sees a
 * session that died after COMMIT was sent: an unknown outcome.
 */
import net from "node:net";
import { startTrackedServer } from "./tracked-server.js";

export type CutMode = "after" | "before";

export interface CommitCutter {
  port: number;
  /** The database URL through the cutter, for the server's URL `target`. */
  url(target: string): string;
  /** Cuts the next session that sends COMMIT; resolves when it has been cut. */
  arm(mode: CutMode): Promise<void>;
  close(): Promise<void>;
}

const COMMIT = Buffer.from("COMMIT");

export async function startCommitCutter(targetPort: number): Promise<CommitCutter> {
  let armed: { mode: CutMode; done: () => void } | undefined;
  const server = await startTrackedServer((client, track) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    track(upstream);
    let cutting = false;
    client.on("data", (chunk: Buffer) => {
      const trigger = armed;
      if (trigger === undefined || !chunk.includes(COMMIT)) {
        upstream.write(chunk);
        return;
      }
      armed = undefined;
      cutting = true;
      if (trigger.mode === "before") {
        client.destroy();
        upstream.destroy();
        trigger.done();
        return;
      }
      // Delivered; the server's answer (and anything after) never reaches the gateway.
      upstream.write(chunk, () => {
        upstream.once("data", () => {
          client.destroy();
          upstream.destroy();
          trigger.done();
        });
      });
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!cutting) client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  const port = server.port;
  return {
    port,
    url: (target) => {
      const url = new URL(target);
      url.port = String(port);
      return url.toString();
    },
    arm: (mode) => new Promise<void>((resolve) => (armed = { mode, done: resolve })),
    close: () => server.close(),
  };
}
