/**
 * Simulates a session lost during COMMIT, which a real server cannot be made to do on demand: a TCP
 * forwarder in front of the database that, once armed, watches what the gateway sends and, at the
 * first `COMMIT` (the text of a simple query, PostgreSQL's Query message or MySQL's COM_QUERY), cuts
 * the session either after delivering it ("after": the server commits, the answer is lost) or instead
 * of delivering it ("before": the server never sees it and rolls back). Either way the gateway sees a
 * session that died after COMMIT was sent: an unknown outcome.
 */
import net from "node:net";

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
  const sockets = new Set<net.Socket>();
  let armed: { mode: CutMode; done: () => void } | undefined;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: (target) => {
      const url = new URL(target);
      url.port = String(port);
      return url.toString();
    },
    arm: (mode) => new Promise<void>((resolve) => (armed = { mode, done: resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
