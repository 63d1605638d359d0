/**
 * Stands in for the network between the gateway and a database in another place (Aurora across an
 * Availability Zone, say): a local TCP forwarder that hands on every byte the database sends `delayMs`
 * late, in order. Each round trip through it then takes `delayMs` more (requests go straight through:
 * Node's timers count whole milliseconds, so the delay is put on one direction only). The bench's cache
 * part measures hits against reads through it.
 */
import net from "node:net";
import { performance } from "node:perf_hooks";
import { startTrackedServer } from "./tracked-server.js";

export interface DelayedForwarder {
  port: number;
  /** `url` (a database URL) with its host and port replaced by the forwarder's. */
  through(url: string): string;
  close(): Promise<void>;
}

/** Writes what `from` sends to `to`, each chunk `delayMs` after it arrived, keeping the order. */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number): void {
  const queue: { due: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as { due: number }).due <= now) to.write((queue.shift() as { chunk: Buffer }).chunk);
    if (queue.length > 0) timer = setTimeout(flush, (queue[0] as { due: number }).due - now);
    else if (ended) to.end();
  };
  from.on("data", (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk });
    timer ??= setTimeout(flush, delayMs);
  });
  from.on("end", () => {
    ended = true;
    if (queue.length === 0) to.end();
  });
}

export async function startDelayedForwarder(targetPort: number, delayMs: number): Promise<DelayedForwarder> {
  const server = await startTrackedServer((client, track) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    track(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    delayedPipe(upstream, client, delayMs);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  return {
    port: server.port,
    through: (url) => {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(server.port);
      return parsed.toString();
    },
    close: () => server.close(),
  };
}
