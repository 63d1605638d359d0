/**
 * Stands in for an Aurora Serverless v2 instance whose capacity (ACUs) changes under load, in front of
 * a real server (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.how-it-works.html):
 * - Scaling keeps every connection: "Aurora Serverless v2 scaling can happen while database connections
 *   are open, while SQL transactions are in process, while tables are locked, and while temporary tables
 *   are in use ... Scaling doesn't disrupt any database operations that are underway." `scaleTo` changes
 *   no connection.
 * - An ACU is "approximately 2 GiB of memory, corresponding CPU, and networking": what a caller sees of
 *   a lower capacity is slower statements. Each statement's bytes reach the server `latencyAtOneAcuMs / acu`
 *   late (in order); the buffer cache that shrinks and grows with capacity is not modelled (a real
 *   server's shared_buffers cannot change while it runs).
 * - `max_connections` is fixed by the maximum capacity ("active connections aren't dropped if the load
 *   drops and Aurora Serverless v2 scales down"): the server's own limit stays as it is.
 * - "In the rare cases that an Aurora Serverless v2 writer or reader is moved from one host to another,
 *   Aurora Serverless v2 manages the connections automatically": whether a connection survives the move
 *   is not settled, so `moveHost` is a switch: "connections-kept" (traffic held for `moveStallMs`, then
 *   on as before) or "connections-reset" (every open connection reset; new ones reach the new host).
 */
import net from "node:net";
import { startTrackedServer } from "./tracked-server.js";

export type HostMove = "connections-kept" | "connections-reset";

export interface ServerlessInstanceOptions {
  /** The real server behind it, on 127.0.0.1. */
  targetPort: number;
  /** Capacity it starts with, ACUs (default 0.5, Aurora's smallest minimum). */
  acu?: number;
  /** Extra time a statement's bytes take at 1 ACU, ms (default 4: 8 ms at 0.5 ACU, none from 8 ACUs up). */
  latencyAtOneAcuMs?: number;
  /** How long traffic is held while the instance moves hosts with its connections kept (default 300 ms). */
  moveStallMs?: number;
}

export interface ServerlessInstance {
  port: number;
  readonly acu: number;
  /** Connections accepted so far, those open now, and those reset by a host move. */
  readonly accepted: number;
  readonly open: number;
  readonly reset: number;
  /** Scales in place to `acu` (0.5 to 256): every connection and statement goes on. */
  scaleTo(acu: number): void;
  /** The rare move to another host; what open connections meet is the switch. */
  moveHost(connections: HostMove): void;
  /** `url` with this stand-in's host and port: the instance's endpoint. */
  endpointUrl(url: string): string;
  close(): Promise<void>;
}

export async function startServerlessInstance(options: ServerlessInstanceOptions): Promise<ServerlessInstance> {
  let acu = options.acu ?? 0.5;
  let holdUntil = 0;
  let accepted = 0;
  let reset = 0;
  const latencyAtOneAcuMs = options.latencyAtOneAcuMs ?? 4;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const delayMs = () => Math.max(Math.floor(latencyAtOneAcuMs / acu), holdUntil - Date.now(), 0);

  const server = await startTrackedServer((client, track) => {
    accepted++;
    const upstream = net.connect(options.targetPort, "127.0.0.1");
    track(upstream);
    const pair = { client, upstream };
    pairs.add(pair);
    // Chained, so that bytes keep their order whatever the capacity when each arrived.
    let queue = Promise.resolve();
    client.on("data", (chunk) => {
      const wait = delayMs();
      queue = queue.then(() => (wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : undefined)).then(() => {
        if (!upstream.destroyed) upstream.write(chunk);
      });
    });
    upstream.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });

  return {
    port: server.port,
    get acu() {
      return acu;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    get reset() {
      return reset;
    },
    scaleTo(next) {
      if (!(next >= 0.5 && next <= 256)) throw new Error(`capacity ${next} ACUs is outside 0.5-256`);
      acu = next;
    },
    moveHost(connections) {
      if (connections === "connections-kept") {
        holdUntil = Date.now() + (options.moveStallMs ?? 300);
        return;
      }
      for (const pair of [...pairs]) {
        reset++;
        pair.client.resetAndDestroy();
        pair.upstream.destroy();
      }
    },
    endpointUrl(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(server.port);
      return parsed.toString();
    },
    close: () => server.close(),
  };
}
