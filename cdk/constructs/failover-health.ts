/**
 * The failover health checks:
 * - the failover hook: RDS events (failover-events.ts) make it ask every gateway task — listed from
 *   ECS, reached directly, not only the one the load balancer picks — to look at its topology at once;
 * - the canary on a schedule: with a fresh client each run (no stickiness carried over), it writes and
 *   reads back through the load balancer and on every task, and reports CanarySuccess and latency;
 * - alarms to an SNS topic (failover-alarms.ts), which also receives the RDS events themselves;
 * - a CloudWatch dashboard of the gateway, the canary and the cluster.
 */
import { Duration, aws_cloudwatch as cloudwatch, aws_ec2 as ec2, aws_events as events, aws_events_targets as targets, aws_iam as iam, aws_kms as kms, aws_sns as sns } from "aws-cdk-lib";
import { Construct } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import { CallerFunction } from "./caller-function.js";
import { FailoverAlarms } from "./failover-alarms.js";
import { FailoverEvents } from "./failover-events.js";
import type { PoolgateGateway } from "./gateway-service.js";

export interface FailoverHealthProps {
  vpc: ec2.IVpc;
  gateway: PoolgateGateway;
  database: PoolgateDatabase;
  /** Reader instances of the cluster. */
  readers: number;
  projectRoot: string;
  canaryInterval?: Duration;
}

export class FailoverHealth extends Construct {
  readonly topic: sns.Topic;
  readonly canary: CallerFunction;
  readonly hook: CallerFunction;
  readonly events: FailoverEvents;
  readonly alarms: FailoverAlarms;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: FailoverHealthProps) {
    super(scope, id);
    const { gateway, database } = props;
    // A key of our own: CloudWatch alarms and EventBridge cannot publish to a topic under the AWS-managed SNS key.
    const key = new kms.Key(this, "AlarmsKey", { enableKeyRotation: true, description: "Poolgate alarm topic" });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal("cloudwatch.amazonaws.com"), new iam.ServicePrincipal("events.amazonaws.com")],
        actions: ["kms:Decrypt", "kms:GenerateDataKey*"],
        resources: ["*"],
      }),
    );
    this.topic = new sns.Topic(this, "Alarms", { enforceSSL: true, masterKey: key });

    this.hook = new CallerFunction(this, "FailoverHook", {
      vpc: props.vpc,
      entry: `${props.projectRoot}/functions/failover-hook/handler.ts`,
      projectRoot: props.projectRoot,
      serviceName: "poolgate-failover-hook",
      // A failover sends a few events within seconds; each run reaches every task.
      reservedConcurrency: 2,
    });
    // The hook only asks the gateway to look at its topology: an operator route, no data.
    gateway.grantFunction(this.hook.function, { admin: true });
    gateway.grantTaskAccess(this.hook.function);
    this.events = new FailoverEvents(this, "Events", { database, hook: this.hook.function, topic: this.topic });

    this.canary = new CallerFunction(this, "Canary", {
      vpc: props.vpc,
      entry: `${props.projectRoot}/functions/canary/handler.ts`,
      projectRoot: props.projectRoot,
      serviceName: "poolgate-canary",
      timeout: Duration.seconds(20),
      // One check at a time: a slow run is never overlapped by the next.
      reservedConcurrency: 1,
      environment: { POOLGATE_ENGINE: database.engine },
    });
    gateway.grantFunction(this.canary.function);
    gateway.grantTaskAccess(this.canary.function);
    // One check per schedule tick: no asynchronous retries overlapping the next run.
    this.canary.function.configureAsyncInvoke({ retryAttempts: 0 });
    new events.Rule(this, "CanarySchedule", {
      description: "Poolgate canary: write and read back through the gateway, on every task",
      schedule: events.Schedule.rate(props.canaryInterval ?? Duration.minutes(1)),
      targets: [new targets.LambdaFunction(this.canary.function, { retryAttempts: 0 })],
    });

    this.alarms = new FailoverAlarms(this, "FailoverAlarms", {
      gateway,
      database,
      readers: props.readers,
      topic: this.topic,
      canary: this.canary.function,
      hook: this.hook.function,
      deadLetters: this.events.deadLetters,
    });

    const m = this.alarms.metrics;
    const lb = gateway.loadBalancer.metrics;
    this.dashboard = new cloudwatch.Dashboard(this, "Dashboard", { defaultInterval: Duration.hours(3) });
    const graph = (title: string, left: (cloudwatch.IMetric | undefined)[], right: (cloudwatch.IMetric | undefined)[] = []) =>
      new cloudwatch.GraphWidget({ title, left: left.filter((metric) => metric !== undefined), right: right.filter((metric) => metric !== undefined), width: 8 });
    this.dashboard.addWidgets(
      graph("Canary success", [m.canarySuccess]),
      graph("Canary latency p99 (ms)", [m.canaryLatency]),
      graph("Gateway requests and 5xx", [lb.requestCount({ period: Duration.minutes(1) })], [m.target5xx]),
      graph("Gateway response time p99 (s)", [m.latency]),
      graph("Writer pool: acquire wait p99 (ms) and waiting callers", [m.poolWait], [m.poolWaiting]),
      graph("Gateway tasks", [m.healthy, m.unhealthy], [gateway.service.metricCpuUtilization(), gateway.service.metricMemoryUtilization()]),
      graph("Aurora connections (writer, readers) and replica lag (ms)", [m.writerConnections, m.readerConnections], [m.replicaLag]),
    );
  }
}
