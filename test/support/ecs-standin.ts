/**
 * Simulates the two ECS calls the failover hook and the canary make, ListTasks and DescribeTasks, on
 * 127.0.0.1 (an ephemeral port), the way the SDK speaks to ECS: AWS JSON 1.1 (POST /, `x-amz-target:
 * AmazonEC2ContainerServiceV20141113.<Operation>`). It answers with the tasks a test sets — each a
 * private address and a status — for one cluster and service, paging ListTasks so the caller must
 * follow nextToken. It does NOT check SigV4 signatures: the tests give the SDK dummy credentials.
 * Point the SDK at it with AWS_ENDPOINT_URL_ECS.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface StandInTask {
  /** The task's private IPv4 address (its awsvpc network interface). */
  address: string;
  /** Default RUNNING. */
  lastStatus?: string;
  /** The container health check's verdict (the stack's asks /readyz); default HEALTHY. */
  healthStatus?: string;
}

export interface EcsStandIn {
  readonly url: string;
  /** The service's tasks from now on. */
  setTasks(tasks: StandInTask[]): void;
  /** Calls received, by operation. */
  calls(operation: "ListTasks" | "DescribeTasks"): number;
  close(): Promise<void>;
}

const TARGET_PREFIX = "AmazonEC2ContainerServiceV20141113.";
const PAGE_SIZE = 2;

export async function startEcsStandIn(cluster: string, service: string): Promise<EcsStandIn> {
  let tasks: StandInTask[] = [];
  const received = new Map<string, number>();
  const arnOf = (index: number) => `arn:aws:ecs:us-east-1:123456789012:task/${cluster.split("/").at(-1) ?? cluster}/task${index}`;

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/x-amz-json-1.1", "x-amzn-requestid": "standin" });
        response.end(JSON.stringify(body));
      };
      const operation = String(request.headers["x-amz-target"] ?? "").replace(TARGET_PREFIX, "");
      received.set(operation, (received.get(operation) ?? 0) + 1);
      let body: { cluster?: string; serviceName?: string; nextToken?: string; tasks?: string[] };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        answer(400, { __type: "SerializationException", message: "body is not JSON" });
        return;
      }
      if (body.cluster !== cluster) {
        answer(400, { __type: "ClusterNotFoundException", message: `no cluster ${String(body.cluster)}` });
        return;
      }
      if (operation === "ListTasks") {
        if (body.serviceName !== service) {
          answer(400, { __type: "ServiceNotFoundException", message: `no service ${String(body.serviceName)}` });
          return;
        }
        const start = Number(body.nextToken ?? 0);
        const page = tasks.map((_, index) => arnOf(index)).slice(start, start + PAGE_SIZE);
        answer(200, { taskArns: page, ...(start + PAGE_SIZE < tasks.length ? { nextToken: String(start + PAGE_SIZE) } : {}) });
        return;
      }
      if (operation === "DescribeTasks") {
        const described = (body.tasks ?? []).map((arn) => {
          const index = tasks.findIndex((_, i) => arnOf(i) === arn);
          const task = tasks[index];
          return {
            taskArn: arn,
            lastStatus: task?.lastStatus ?? "RUNNING",
            healthStatus: task?.healthStatus ?? "HEALTHY",
            containers: [{ name: "gateway", networkInterfaces: task ? [{ attachmentId: "eni-attachment", privateIpv4Address: task.address }] : [] }],
          };
        });
        answer(200, { tasks: described, failures: [] });
        return;
      }
      answer(400, { __type: "UnknownOperationException", message: `unsupported: ${operation}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setTasks: (next) => {
      tasks = next;
    },
    calls: (operation) => received.get(operation) ?? 0,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
