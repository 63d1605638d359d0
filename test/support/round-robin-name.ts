/**
 * Stands in for a DNS name that resolves round-robin over several addresses, as Aurora's reader
 * endpoint does over the cluster's readers: each new connection goes to the next target in turn.
 * Repointing changes where new connections go; existing ones keep their instance, as with real DNS.
 */
import net from "node:net";
import { startTrackedServer } from "./tracked-server.js";

export interface RoundRobinName {
  port: number;
  /** The ports new connections go to, in turn. */
  readonly targets: readonly number[];
  repoint(targetPorts: readonly number[]): void;
  close(): Promise<void>;
}

export async function startRoundRobinName(targetPorts: readonly number[]): Promise<RoundRobinName> {
  if (targetPorts.length === 0) throw new Error("a round-robin name needs at least one target");
  let targets = [...targetPorts];
  let next = 0;
  const server = await startTrackedServer((client, track) => {
    const target = targets[next++ % targets.length] as number;
    const upstream = net.connect(target, "127.0.0.1");
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  return {
    port: server.port,
    get targets() {
      return targets;
    },
    repoint: (ports) => {
      if (ports.length === 0) throw new Error("a round-robin name needs at least one target");
      targets = [...ports];
    },
    close: () => server.close(),
  };
}
