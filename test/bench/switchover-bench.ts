/**
 * The Blue/Green figures of the `lifecycle` part of `npm run bench` (issue 35 §2): a switchover of the
 * Aurora PostgreSQL stand-in's Blue/Green deployment (test/support/aurora-bluegreen.ts) under a steady
 * load of writes and reads through an in-process gateway (test/support/switchover-load.ts, as the
 * test drives it). Requests sent after the sessions were dropped that failed (target 0), and how soon
 * after the switchover ended the first write completed (target <= 1000 ms). Other lifecycle figures
 * (a paused database's resume) come from their own function into the same `lifecycle` key.
 */
import { createBlueGreenDeployment } from "../support/aurora-bluegreen.js";
import { startAuroraStandin } from "../support/aurora-standin.js";
import { startTestGateway } from "../support/gateway.js";
import { runSwitchoverUnderLoad } from "../support/switchover-load.js";
import { onCleanup } from "./processes.js";
import type { SwitchoverFigures } from "./results.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

export async function runSwitchoverBench(step: Step): Promise<SwitchoverFigures> {
  const blue = await step("starting the Aurora PostgreSQL stand-in (a writer, a reader)", 10, () => startAuroraStandin({ readerCount: 1 }));
  const deregister = onCleanup(() => blue.destroy());
  try {
    await blue.primary.query("create table bg_writes (id bigserial primary key, server text not null)");
    const deployment = await step("creating its green environment", 8, () => createBlueGreenDeployment(blue));
    const stopDeployment = onCleanup(() => deployment.destroy());
    try {
      const gw = await startTestGateway({
        clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("replica1"))] } },
        pool: { maxSize: 4, acquireTimeoutMs: 8000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      });
      try {
        const result = await step("a Blue/Green switchover under load (3 writers, 2 readers)", 10, () =>
          runSwitchoverUnderLoad(gw, deployment, {
            write: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port",
            read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from bg_writes limit 1",
            timeoutMs: 15000,
          }),
        );
        return {
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
