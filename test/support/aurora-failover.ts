/**
 * Failover the Aurora way on either Aurora stand-in (aurora-standin.ts for PostgreSQL,
 * aurora-mysql-standin.ts for MySQL), and the names in front of it (docs/aurora.md, "Endpoints and
 * failover", for the AWS pages): the cluster endpoint is a forwarder to the writer, the reader endpoint
 * a name that resolves round-robin over the readers. A failover cuts the writer's sessions (the writer
 * dies), promotes a reader, restarts the other readers on it, brings the old writer back as a reader a
 * few seconds later, and moves the names only after a while (DNS): until then the cluster name still
 * leads to the old writer. Existing connections keep their instance, as with real DNS. Each stand-in
 * says how its engine does each step (AuroraFailoverCluster); the schedule and the names are here.
 */
import type { AuroraInstance, AuroraStandin } from "./aurora-standin.js";
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

/** What the names and a failover need of an instance: its Aurora server id and the gateway's way in (whose port a name leads to). */
export interface AuroraNamedInstance {
  readonly serverId: string;
  url(database?: string): string;
}

/** A stand-in that fails over the Aurora way: each step as its engine does it. */
export interface AuroraFailoverCluster<I extends AuroraNamedInstance> {
  /** The instance that takes writes now; changes with `promote`. */
  writer(): I;
  all(): I[];
  /** The instance dies (kill -9): every session to it is cut. */
  crash(instance: I): Promise<void>;
  /** A reader takes writes (the moment the failover's figures time from). */
  promote(instance: I): Promise<void>;
  /** After a promotion: the stand-in's own figures (replica status, lag) follow the new writer. */
  followWriter(instance: I): Promise<void>;
  /** A reader restarts replicating from the new writer. */
  follow(reader: I, writer: I): Promise<void>;
  /** The crashed old writer is back as a reader of the new one, under its own server id. */
  rejoin(oldWriter: I, writer: I): Promise<void>;
  /**
   * The writer's commits wait until `reader` has them, as an Aurora writer's commits are durable on
   * the shared volume before they are acknowledged: promoting that reader then loses no acknowledged write.
   */
  durableOn(reader: I): Promise<void>;
}

/** The port the gateway's URL to an instance names: where a name in front of it leads. */
function portOf(instance: AuroraNamedInstance): number {
  return Number(new URL(instance.url()).port);
}

/** The instance's URL (the gateway's login) with another port: a name in front of it. */
function through(instance: AuroraNamedInstance, port: number, database?: string): string {
  const url = new URL(instance.url(database));
  url.port = String(port);
  return url.toString();
}

/** The cluster and reader names, pointing where Aurora's point now: the writer, and every reader. */
export async function startAuroraNames<I extends AuroraNamedInstance>(standin: AuroraFailoverCluster<I>): Promise<AuroraNames> {
  const writer = standin.writer();
  const cluster = await startForwarder(portOf(writer));
  const reader = await startRoundRobinName(standin.all().filter((instance) => instance !== writer).map(portOf));
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

/** The Aurora PostgreSQL stand-in's `durableOn` (synchronous_standby_names, on the writer only: a promoted writer has none). */
export async function makeDurableOn(standin: AuroraStandin, reader: AuroraInstance): Promise<void> {
  const writer = standin.writer();
  await writer.query(`ALTER SYSTEM SET synchronous_standby_names = '${reader.name}'`);
  await writer.query("SELECT pg_reload_conf()");
}

export interface AuroraFailoverOptions<I extends AuroraNamedInstance = AuroraNamedInstance> {
  /** The reader to promote; default the first reader. */
  promote?: I;
  /** After the promotion, the old writer is back as a reader this much later (Aurora: a few seconds). */
  oldWriterBackAfterMs: number;
  /** After the promotion, the cluster and reader names move this much later (Aurora's DNS: 5-30 s). */
  namesMoveAfterMs: number;
}

/** When each step happened (Date.now()). */
export interface AuroraFailoverTimeline<I extends AuroraNamedInstance = AuroraNamedInstance> {
  oldWriter: I;
  newWriter: I;
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
export async function failOverTheAuroraWay<I extends AuroraNamedInstance>(
  standin: AuroraFailoverCluster<I>,
  names: AuroraNames,
  options: AuroraFailoverOptions<I>,
  onStep: (step: keyof Omit<AuroraFailoverTimeline, "oldWriter" | "newWriter">, at: number) => void = () => undefined,
): Promise<AuroraFailoverTimeline<I>> {
  const oldWriter = standin.writer();
  const readers = standin.all().filter((instance) => instance !== oldWriter);
  const newWriter = options.promote ?? readers[0];
  if (newWriter === undefined) throw new Error("an Aurora failover needs a reader to promote");
  const otherReaders = readers.filter((instance) => instance !== newWriter);

  await standin.crash(oldWriter);
  const cutAt = Date.now();
  onStep("cutAt", cutAt);
  await standin.promote(newWriter);
  const promotedAt = Date.now();
  onStep("promotedAt", promotedAt);
  await standin.followWriter(newWriter);

  const namesMove = (async () => {
    await sleepUntil(promotedAt + options.namesMoveAfterMs);
    names.cluster.repoint(portOf(newWriter));
    names.reader.repoint([...otherReaders, oldWriter].map(portOf));
    const at = Date.now();
    onStep("namesMovedAt", at);
    return at;
  })();
  const oldWriterBack = (async () => {
    // The other readers restart on the new writer; the old writer comes back as a reader of it, under its own server id.
    for (const reader of otherReaders) await standin.follow(reader, newWriter);
    await sleepUntil(promotedAt + options.oldWriterBackAfterMs);
    await standin.rejoin(oldWriter, newWriter);
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
