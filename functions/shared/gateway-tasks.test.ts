import { DescribeTasksCommand, type ECSClient, ListTasksCommand, type Task } from "@aws-sdk/client-ecs";
import { describe, expect, it } from "vitest";
import { listGatewayTaskUrls } from "./gateway-tasks.js";

/** An ECS client that answers ListTasks and DescribeTasks from a fixed list of tasks. */
function ecsWith(tasks: Task[]): ECSClient {
  const send = async (command: unknown) => {
    if (command instanceof ListTasksCommand) return { taskArns: tasks.map((task) => task.taskArn) };
    if (command instanceof DescribeTasksCommand) return { tasks: tasks.filter((task) => command.input.tasks?.includes(task.taskArn ?? "")) };
    throw new Error("unexpected command");
  };
  return { send } as unknown as ECSClient;
}

const task = (id: string, address: string, lastStatus: string, healthStatus: Task["healthStatus"]): Task => ({
  taskArn: `arn:aws:ecs:us-east-1:123456789012:task/gateway/${id}`,
  lastStatus,
  healthStatus,
  containers: [{ networkInterfaces: [{ privateIpv4Address: address }] }],
});

describe("the gateway's tasks as the hook and the canary see them", () => {
  it("lists only the tasks ECS reports running and healthy (ready), not those still starting or already failing", async () => {
    const ecs = ecsWith([
      task("ready", "10.0.1.20", "RUNNING", "HEALTHY"),
      task("starting", "10.0.1.21", "RUNNING", "UNKNOWN"),
      task("unhealthy", "10.0.1.22", "RUNNING", "UNHEALTHY"),
      task("pending", "10.0.1.23", "PENDING", "UNKNOWN"),
      task("ready-too", "10.0.2.30", "RUNNING", "HEALTHY"),
    ]);
    expect(await listGatewayTaskUrls(ecs, { cluster: "gateway", service: "svc", port: 8080 })).toEqual(["http://10.0.1.20:8080", "http://10.0.2.30:8080"]);
  });
});
