/**
 * Stands in for a DNS name such as Aurora's cluster endpoint: a local TCP forwarder whose target the
 * test repoints (late, or wrongly) to reproduce the stale-DNS trap after a failover. Existing
 * connections keep their old target, as they would with real DNS. With `dropFirst` it also simulates
 * an endpoint whose first connection attempts fail (a failover in progress, a listener not yet up).
 */
import net from "node:net";
import { startTrackedServer } from "./tracked-server.js";

export interface TcpForwarder {
  port: number;
  /** Connections accepted so far, dropped ones included. */
  readonly accepted: number;
  url(database?: string): string;
  repoint(targetPort: number): void;
  close(): Promise<void>;
}

export async function startForwarder(targetPort: number, options: { dropFirst?: number } = {}): Promise<TcpForwarder> {
  let target = targetPort;
  let accepted = 0;
  const server = await startTrackedServer((client, track) => {
    if (++accepted <= (options.dropFirst ?? 0)) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target, "127.0.0.1");
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  const port = server.port;
  return {
    port,
    get accepted() {
      return accepted;
    },
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    repoint: (next) => {
      target = next;
    },
    close: () => server.close(),
  };
}
