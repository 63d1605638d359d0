/**
 * A loopback TCP server that remembers every socket it accepts or opens for a connection, so that
 * `close()` ends them all: the base of the tests' forwarders and black holes (tcp-forwarder.ts, commit-cutter.ts, black-hole.ts).
 */
import net from "node:net";

export interface TrackedServer {
  port: number;
  close(): Promise<void>;
}

/** Where a tracked server listens: default 127.0.0.1 on a free port. */
export interface ListenAddress {
  host?: string;
  port?: number;
}

/** `onConnection` gets each accepted socket (already tracked) and `track` for the sockets it opens itself. */
export async function startTrackedServer(
  onConnection: (client: net.Socket, track: (socket: net.Socket) => void) => void,
  address: ListenAddress = {},
): Promise<TrackedServer> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    onConnection(client, track);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port ?? 0, address.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
