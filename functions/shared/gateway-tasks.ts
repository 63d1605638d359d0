/**
 * The gateway's running tasks, listed from ECS, as URLs a function reaches directly — not only the one
 * task the load balancer would pick. The CDK stack's `grantTaskAccess` sets POOLGATE_ECS_CLUSTER,
 * POOLGATE_ECS_SERVICE and POOLGATE_TASK_PORT and allows ecs:ListTasks / ecs:DescribeTasks on the
 * gateway's cluster and the container port from the function.
 */
import { DescribeTasksCommand, type ECSClient, ListTasksCommand } from "@aws-sdk/client-ecs";
import { z } from "zod";

/** Where the tasks are: the ECS cluster and service, and the tasks' port. */
export interface GatewayTasks {
  cluster: string;
  service: string;
  port: number;
}

/** The task-access variables, or undefined when the function has none (it then uses the load balancer only). */
export function gatewayTasksFromEnv(env: NodeJS.ProcessEnv): GatewayTasks | undefined {
  const parsed = z
    .object({
      POOLGATE_ECS_CLUSTER: z.string().min(1).optional(),
      POOLGATE_ECS_SERVICE: z.string().min(1).optional(),
      POOLGATE_TASK_PORT: z.coerce.number().int().min(1).max(65535).default(8080),
    })
    .parse(env);
  if (parsed.POOLGATE_ECS_CLUSTER === undefined && parsed.POOLGATE_ECS_SERVICE === undefined) return undefined;
  if (parsed.POOLGATE_ECS_CLUSTER === undefined || parsed.POOLGATE_ECS_SERVICE === undefined) {
    throw new Error("POOLGATE_ECS_CLUSTER and POOLGATE_ECS_SERVICE go together: set both or neither");
  }
  return { cluster: parsed.POOLGATE_ECS_CLUSTER, service: parsed.POOLGATE_ECS_SERVICE, port: parsed.POOLGATE_TASK_PORT };
}

/** DescribeTasks takes at most 100 tasks per call. */
const DESCRIBE_BATCH = 100;

/**
 * `http://<private IPv4>:<port>` of every task of the service that is ready, in a stable order. Ready
 * means ECS reports the task HEALTHY: the gateway container's health check (the CDK stack's) asks the
 * task's own /readyz, so a task that is RUNNING but still starting — every deployment and scale-out
 * has some — or already draining is left out, rather than called and counted as a failure.
 */
export async function listGatewayTaskUrls(ecs: ECSClient, tasks: GatewayTasks): Promise<string[]> {
  const arns: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await ecs.send(new ListTasksCommand({ cluster: tasks.cluster, serviceName: tasks.service, desiredStatus: "RUNNING", nextToken }));
    arns.push(...(page.taskArns ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  const urls: string[] = [];
  for (let start = 0; start < arns.length; start += DESCRIBE_BATCH) {
    const { tasks: described = [] } = await ecs.send(new DescribeTasksCommand({ cluster: tasks.cluster, tasks: arns.slice(start, start + DESCRIBE_BATCH) }));
    for (const task of described) {
      if (task.lastStatus !== "RUNNING" || task.healthStatus !== "HEALTHY") continue;
      const address = task.containers?.flatMap((container) => container.networkInterfaces ?? []).find((network) => network.privateIpv4Address)?.privateIpv4Address;
      if (address) urls.push(`http://${address}:${tasks.port}`);
    }
  }
  return urls.sort();
}
