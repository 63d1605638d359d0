/**
 * Simulates a database endpoint whose first connection attempts fail (a failover in progress, a
 * listener not yet up): it drops the first `failFirst` TCP connections, then forwards to the target.
 */
import net from "node:net";

export interface FlakyProxy {
  port: number;
  accepted: number;
  close(): Promise<void>;
}

export async function startFlakyProxy(target: { host: string; port: number }, failFirst: number): Promise<FlakyProxy> {
  const sockets = new Set<net.Socket>();
  const state = { accepted: 0 };
  const server = net.createServer((client) => {
    state.accepted++;
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (state.accepted <= failFirst) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get accepted() {
      return state.accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on which nothing listens (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
