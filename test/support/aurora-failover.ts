/**
 * Failover the Aurora way on the Aurora PostgreSQL stand-in (aurora-standin.ts), and the names in
 * front of it (docs/aurora.md, "Endpoints and failover", for the AWS pages): the cluster endpoint is a
 * forwarder to the writer, the reader endpoint a name that resolves round-robin over the readers. A
 * failover cuts the writer's sessions (the writer dies), promotes a reader, restarts the other readers
 * on it, brings the old writer back as a reader a few seconds later, and moves the names only after a
 * while (DNS): until then the cluster name still leads to the old writer. Existing connections keep
 * their instance, as with real DNS.
 */
import { type AuroraInstance, type AuroraStandin, serverIdSetting } from "./aurora-standin.js";
import { type RoundRobinName, startRoundRobinName } from "./round-robin-name.js";
import { startForwarder, type TcpForwarder } from "./tcp-forwarder.js";

export interface AuroraNames {
  /** The cluster (writer) endpoint's name. */
  readonly cluster: TcpForwarder;
  /** The reader endpoint's name: each new connection to the next reader. */
  readonly reader: RoundRobinName;
  /** The gateway's login through the cluster name. */
  clusterUrl(database?: string): string;
  /** The gateway's login through the reader name. */
  readerUrl(database?: string): string;
  close(): Promise<void>;
}

/** The instance's URL (the gateway's login) with another port: a name in front of it. */
function through(instance: AuroraInstance, port: number, database?: string): string {
  const url = new URL(instance.url(database));
  url.port = String(port);
  return url.toString();
}

/** The cluster and reader names, pointing where Aurora's point now: the writer, and every reader. */
export async function startAuroraNames(standin: AuroraStandin): Promise<AuroraNames> {
  const writer = standin.writer();
  const cluster = await startForwarder(writer.port);
  const reader = await startRoundRobinName(standin.all().filter((instance) => instance !== writer).map((instance) => instance.port));
  return {
    cluster,
    reader,
    clusterUrl: (database) => through(writer, cluster.port, database),
    readerUrl: (database) => through(writer, reader.port, database),
    close: async () => {
      await cluster.close();
      await reader.close();
    },
  };
}

/**
 * Commits on the writer wait until `reader` has them (synchronous_standby_names), as an Aurora
 * writer's commits are durable on the shared volume before they are acknowledged: promoting that
 * reader then loses no acknowledged write. Set on the writer only; a promoted writer has none.
 */
export async function makeDurableOn(standin: AuroraStandin, reader: AuroraInstance): Promise<void> {
  const writer = standin.writer();
  await writer.query(`ALTER SYSTEM SET synchronous_standby_names = '${reader.name}'`);
  await writer.query("SELECT pg_reload_conf()");
}

export interface AuroraFailoverOptions {
  /** The reader to promote; default the first reader. */
  promote?: AuroraInstance;
  /** After the promotion, the old writer is back as a reader this much later (Aurora: a few seconds). */
  oldWriterBackAfterMs: number;
  /** After the promotion, the cluster and reader names move this much later (Aurora's DNS: 5-30 s). */
  namesMoveAfterMs: number;
}

/** When each step happened (Date.now()). */
export interface AuroraFailoverTimeline {
  oldWriter: AuroraInstance;
  newWriter: AuroraInstance;
  /** The writer's sessions were cut (the writer no longer answers). */
  cutAt: number;
  /** The promotion returned: the new writer takes writes. */
  promotedAt: number;
  /** The old writer answers again, as a reader. */
  oldWriterBackAt: number;
  /** The cluster name leads to the new writer, the reader name to the readers. */
  namesMovedAt: number;
}

/**
 * One Aurora failover on the stand-in, with its names: resolves once the old writer is back and the
 * names have moved. `onStep` hears each step as it happens (tests and the bench time from them).
 */
export async function failOverTheAuroraWay(
  standin: AuroraStandin,
  names: AuroraNames,
  options: AuroraFailoverOptions,
  onStep: (step: keyof Omit<AuroraFailoverTimeline, "oldWriter" | "newWriter">, at: number) => void = () => undefined,
): Promise<AuroraFailoverTimeline> {
  const oldWriter = standin.writer();
  const readers = standin.all().filter((instance) => instance !== oldWriter);
  const newWriter = options.promote ?? readers[0];
  if (newWriter === undefined) throw new Error("an Aurora failover needs a reader to promote");
  const otherReaders = readers.filter((instance) => instance !== newWriter);

  await oldWriter.kill9();
  const cutAt = Date.now();
  onStep("cutAt", cutAt);
  await newWriter.promote();
  const promotedAt = Date.now();
  onStep("promotedAt", promotedAt);
  await standin.setWriter(newWriter);

  const namesMove = (async () => {
    await sleepUntil(promotedAt + options.namesMoveAfterMs);
    names.cluster.repoint(newWriter.port);
    names.reader.repoint([...otherReaders, oldWriter].map((instance) => instance.port));
    const at = Date.now();
    onStep("namesMovedAt", at);
    return at;
  })();
  const oldWriterBack = (async () => {
    // The other readers restart on the new writer; the old writer comes back as a reader of it, under its own server id.
    for (const reader of otherReaders) await reader.follow(newWriter);
    await sleepUntil(promotedAt + options.oldWriterBackAfterMs);
    await oldWriter.rebuildFrom(newWriter, serverIdSetting(oldWriter));
    const at = Date.now();
    onStep("oldWriterBackAt", at);
    return at;
  })();
  const [namesMovedAt, oldWriterBackAt] = await Promise.all([namesMove, oldWriterBack]);
  return { oldWriter, newWriter, cutAt, promotedAt, oldWriterBackAt, namesMovedAt };
}

/** The stand-in's schedule is wall-clock: a wait until a moment, not a measurement. */
function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}
