/**
 * The failover health checks:
 * - the failover hook (Aurora only): RDS events (failover-events.ts) make it ask every gateway task —
 *   listed from ECS, reached directly, not only the one the load balancer picks — to look at its
 *   topology at once. An Aurora DSQL cluster has no topology or failover to follow: neither the hook,
 *   nor the event rules, nor the instance alarms exist there;
 * - the canary on a schedule: with a fresh client each run (no stickiness carried over), it writes and
 *   reads back through the load balancer and on every task, and reports CanarySuccess and latency;
 * - alarms to an SNS topic (failover-alarms.ts), which also receives the RDS events themselves;
 * - a CloudWatch dashboard of the gateway, the canary and the cluster.
 */
import { Duration, aws_cloudwatch as cloudwatch, aws_ec2 as ec2, aws_events as events, aws_events_targets as targets, aws_iam as iam, aws_kms as kms, aws_sns as sns } from "aws-cdk-lib";
import { Construct } from "constructs";
import { CallerFunction } from "./caller-function.js";
import type { GatewayDatabase } from "./database-target.js";
import { FailoverAlarms } from "./failover-alarms.js";
import { FailoverEvents } from "./failover-events.js";
import type { PoolgateGateway } from "./gateway-service.js";

export interface FailoverHealthProps {
  vpc: ec2.IVpc;
  gateway: PoolgateGateway;
  database: GatewayDatabase;
  projectRoot: string;
  canaryInterval?: Duration;
}

export class FailoverHealth extends Construct {
  readonly topic: sns.Topic;
  readonly canary: CallerFunction;
  /** The failover hook and the RDS event rules: only for a database with a topology (Aurora). */
  readonly hook: CallerFunction | undefined;
  readonly events: FailoverEvents | undefined;
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

    const { topology } = database;
    if (topology) {
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
      this.events = new FailoverEvents(this, "Events", { database: topology.database, hook: this.hook.function, topic: this.topic });
    }

    this.canary = new CallerFunction(this, "Canary", {
      vpc: props.vpc,
      entry: `${props.projectRoot}/functions/canary/handler.ts`,
      projectRoot: props.projectRoot,
      serviceName: "poolgate-canary",
      timeout: Duration.seconds(20),
      // One check at a time: a slow run is never overlapped by the next.
      reservedConcurrency: 1,
      environment: { POOLGATE_ENGINE: database.dialect },
    });
    gateway.grantFunction(this.canary.function);
    gateway.grantTaskAccess(this.canary.function);
    // One check per schedule tick: no asynchronous retries overlapping the next run.
    this.canary.function.configureAsyncInvoke({ retryAttempts: 0 });
    new events.Rule(this, "CanarySchedule", {
      description: "Poolgate canary: write and read back through the gateway, on every task",
      // A cluster that may pause (Serverless v2 at 0 ACUs) is woken by every canary run: hourly, so the
      // database may pause between runs (each run waits for a resume, about 15 s) instead of never.
      schedule: events.Schedule.rate(props.canaryInterval ?? (props.database.topology?.database.mayPause === true ? Duration.hours(1) : Duration.minutes(1))),
      targets: [new targets.LambdaFunction(this.canary.function, { retryAttempts: 0 })],
    });

    this.alarms = new FailoverAlarms(this, "FailoverAlarms", {
      gateway,
      topology,
      topic: this.topic,
      canary: this.canary.function,
      hook: this.hook?.function,
      deadLetters: this.events?.deadLetters,
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
    );
    if (topology) this.dashboard.addWidgets(graph("Aurora connections (writer, readers) and replica lag (ms)", [m.writerConnections, m.readerConnections], [m.replicaLag]));
  }
}
