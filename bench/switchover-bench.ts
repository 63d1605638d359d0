/**
 * The Blue/Green figures of the `lifecycle` part of `npm run bench` (issue 35 §2): a switchover of each
 * Aurora stand-in's Blue/Green deployment (PostgreSQL: test/support/aurora-bluegreen.ts; MySQL:
 * test/support/aurora-mysql-bluegreen.ts) under a steady load of writes and reads through an
 * in-process gateway (test/support/switchover-load.ts, as bluegreen-suite.ts drives it). Per engine:
 * requests sent after the sessions were dropped that failed (target 0), and how soon after the
 * switchover ended the first write completed (target <= 1000 ms); the top-level figures are the worst
 * over the engines. Other lifecycle figures (a paused database's resume) come from their own function
 * into the same `lifecycle` key.
 */
import { createBlueGreenDeployment } from "../test/support/aurora-bluegreen.js";
import { createMysqlBlueGreenDeployment } from "../test/support/aurora-mysql-bluegreen.js";
import { startAuroraMysqlStandin } from "../test/support/aurora-mysql-standin.js";
import { startAuroraStandin } from "../test/support/aurora-standin.js";
import type { BlueGreenDeployment } from "../test/support/bluegreen-switchover.js";
import { startTestGateway } from "../test/support/gateway.js";
import { runSwitchoverUnderLoad } from "../test/support/switchover-load.js";
import { onCleanup } from "./processes.js";
import type { SwitchoverFigures, SwitchoverRow } from "./results.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

/** One engine's blue environment (a writer and a reader, with the table bg_writes) and its green. */
interface Target {
  engine: SwitchoverRow["engine"];
  label: string;
  /** Blue, and how to create its green. */
  startBlue(): Promise<{ destroy(): Promise<void>; createGreen(): Promise<BlueGreenDeployment> }>;
  write: string;
  read: string;
}

const TARGETS: Target[] = [
  {
    engine: "postgres",
    label: "Aurora PostgreSQL",
    startBlue: async () => {
      const blue = await startAuroraStandin({ readerCount: 1 });
      await blue.primary.query("create table bg_writes (id bigserial primary key, server text not null)");
      return { destroy: () => blue.destroy(), createGreen: () => createBlueGreenDeployment(blue) };
    },
    write: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port",
    read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from bg_writes limit 1",
  },
  {
    engine: "mysql",
    label: "Aurora MySQL",
    startBlue: async () => {
      const blue = await startAuroraMysqlStandin({ readerCount: 1 });
      await blue.primary.query("create table test.bg_writes (id bigint auto_increment primary key, server varchar(100) not null, port int not null)");
      return { destroy: () => blue.destroy(), createGreen: () => createMysqlBlueGreenDeployment(blue) };
    },
    write: "insert into bg_writes (server, port) values (@@aurora_server_id, @@port) returning server, port",
    read: "select @@aurora_server_id as server, @@port as port from bg_writes limit 1",
  },
];

async function measure(target: Target, step: Step): Promise<SwitchoverRow> {
  const blue = await step(`starting the ${target.label} stand-in (a writer, a reader)`, 10, () => target.startBlue());
  const deregister = onCleanup(() => blue.destroy());
  try {
    const deployment = await step(`creating its green environment (${target.label})`, 8, () => blue.createGreen());
    const stopDeployment = onCleanup(() => deployment.destroy());
    try {
      const gw = await startTestGateway({
        clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("replica1"))] } },
        pool: { maxSize: 4, acquireTimeoutMs: 8000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      });
      try {
        const result = await step(`a Blue/Green switchover under load (${target.label}, 3 writers, 2 readers)`, 10, () =>
          runSwitchoverUnderLoad(gw, deployment, { write: target.write, read: target.read, timeoutMs: 15000 }),
        );
        return {
          engine: target.engine,
          failedDuringSwitchover: result.failedAfterBlock.length,
          failedInFlightAtSwitchover: result.failedInFlight,
          writesBackAfterSwitchoverMs: Math.round(result.writesBackAfterMs),
          switchoverMs: Math.round(result.times.endedAt - result.times.blockedAt),
        };
      } finally {
        await gw.stop();
      }
    } finally {
      stopDeployment();
      await deployment.destroy();
    }
  } finally {
    deregister();
    await blue.destroy();
  }
}

export async function runSwitchoverBench(step: Step): Promise<SwitchoverFigures> {
  const switchover: SwitchoverRow[] = [];
  for (const target of TARGETS) switchover.push(await measure(target, step));
  return {
    failedDuringSwitchover: switchover.reduce((sum, row) => sum + row.failedDuringSwitchover, 0),
    failedInFlightAtSwitchover: switchover.reduce((sum, row) => sum + row.failedInFlightAtSwitchover, 0),
    writesBackAfterSwitchoverMs: Math.max(...switchover.map((row) => row.writesBackAfterSwitchoverMs)),
    switchoverMs: Math.max(...switchover.map((row) => row.switchoverMs)),
    switchover,
  };
}
