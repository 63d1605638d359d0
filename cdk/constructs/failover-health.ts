/**
 * The failover health checks:
 * - an EventBridge rule on the cluster's failover events (source aws.rds, "RDS DB Cluster Event",
 *   RDS-EVENT-0069…0073) that invokes a hook telling the gateway to refresh its topology at once
 *   (events are best effort: they speed things up; the gateway's monitor stays the source of truth);
 * - the canary on a schedule (write, read back, CanarySuccess and latency metrics);
 * - alarms to an SNS topic: canary failures, gateway 5xx, gateway latency, pool wait time (the
 *   gateway's EMF pool metrics), unhealthy targets;
 * - a CloudWatch dashboard of the gateway, the canary and the cluster.
 */
import { Duration, aws_cloudwatch as cloudwatch, aws_cloudwatch_actions as actions, aws_ec2 as ec2, aws_events as events, aws_events_targets as targets, aws_iam as iam, aws_kms as kms, aws_sns as sns } from "aws-cdk-lib";
import { HttpCodeElb, HttpCodeTarget } from "aws-cdk-lib/aws-elasticloadbalancingv2";
import { Construct } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import { CallerFunction } from "./caller-function.js";
import type { PoolgateGateway } from "./gateway-service.js";

export const FAILOVER_EVENT_IDS = ["RDS-EVENT-0069", "RDS-EVENT-0070", "RDS-EVENT-0071", "RDS-EVENT-0072", "RDS-EVENT-0073"];

export interface FailoverHealthProps {
  vpc: ec2.IVpc;
  gateway: PoolgateGateway;
  database: PoolgateDatabase;
  projectRoot: string;
  canaryInterval?: Duration;
}

export class FailoverHealth extends Construct {
  readonly topic: sns.Topic;
  readonly canary: CallerFunction;
  readonly hook: CallerFunction;
  readonly failoverRule: events.Rule;
  readonly alarms: cloudwatch.Alarm[];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: FailoverHealthProps) {
    super(scope, id);
    const { gateway, database } = props;
    // A key of our own: CloudWatch alarms cannot publish to a topic under the AWS-managed SNS key.
    const key = new kms.Key(this, "AlarmsKey", { enableKeyRotation: true, description: "Poolgate alarm topic" });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal("cloudwatch.amazonaws.com")],
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
    });
    // The hook only asks the gateway to look at its topology: an operator route, no data.
    gateway.grant(this.hook.function, { admin: true });
    this.failoverRule = new events.Rule(this, "FailoverEvents", {
      description: "Aurora failover events: tell the gateway to look at its topology now",
      eventPattern: {
        source: ["aws.rds"],
        detailType: ["RDS DB Cluster Event"],
        detail: { EventID: FAILOVER_EVENT_IDS, SourceIdentifier: [database.cluster.clusterIdentifier] },
      },
      targets: [new targets.LambdaFunction(this.hook.function, { retryAttempts: 2, maxEventAge: Duration.minutes(2) })],
    });

    this.canary = new CallerFunction(this, "Canary", {
      vpc: props.vpc,
      entry: `${props.projectRoot}/functions/canary/handler.ts`,
      projectRoot: props.projectRoot,
      serviceName: "poolgate-canary",
      timeout: Duration.seconds(20),
    });
    gateway.grant(this.canary.function);
    this.canary.function.addEnvironment("POOLGATE_ENGINE", database.engine);
    // One check per schedule tick: no asynchronous retries overlapping the next run.
    this.canary.function.configureAsyncInvoke({ retryAttempts: 0 });
    new events.Rule(this, "CanarySchedule", {
      description: "Poolgate canary: write and read back through the gateway",
      schedule: events.Schedule.rate(props.canaryInterval ?? Duration.minutes(1)),
      targets: [new targets.LambdaFunction(this.canary.function, { retryAttempts: 0 })],
    });

    // The canary's metrics (Powertools EMF, dimension service) and the gateway's pool metrics (EMF).
    const poolgateMetric = (metricName: string, dimensionsMap: Record<string, string>, statistic: string) =>
      new cloudwatch.Metric({ namespace: "Poolgate", metricName, dimensionsMap, statistic, period: Duration.minutes(1) });
    const canary = { service: "poolgate-canary" };
    const writer = { cluster: gateway.clusterName, endpoint: `${gateway.clusterName}/writer` };
    const canarySuccess = poolgateMetric("CanarySuccess", canary, "Minimum");
    const canaryLatency = poolgateMetric("CanaryLatency", canary, "p99");
    const writerPool = (metricName: string) => poolgateMetric(metricName, writer, "Maximum");
    const poolWait = writerPool("PoolAcquireWaitP99");
    const poolWaiting = writerPool("PoolWaiting");
    const lb = gateway.loadBalancer.metrics;
    const target5xx = lb.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, { period: Duration.minutes(1), statistic: "Sum" });
    // The load balancer's own 502/503s (no healthy task) count too.
    const all5xx = new cloudwatch.MathExpression({
      expression: "FILL(target, 0) + FILL(elb, 0)",
      usingMetrics: { target: target5xx, elb: lb.httpCodeElb(HttpCodeElb.ELB_5XX_COUNT, { period: Duration.minutes(1), statistic: "Sum" }) },
      label: "5xx (gateway and load balancer)",
      period: Duration.minutes(1),
    });
    const latency = lb.targetResponseTime({ period: Duration.minutes(1), statistic: "p99" });
    const unhealthy = gateway.targetGroup.metrics.unhealthyHostCount({ period: Duration.minutes(1), statistic: "Maximum" });
    const action = new actions.SnsAction(this.topic);
    const alarm = (name: string, props: cloudwatch.CreateAlarmOptions & { metric: cloudwatch.Metric | cloudwatch.MathExpression }) => {
      const created = props.metric.createAlarm(this, name, props);
      created.addAlarmAction(action);
      created.addOkAction(action);
      return created;
    };
    this.alarms = [
      alarm("CanaryFailing", {
        metric: canarySuccess,
        alarmDescription: "The canary could not write and read back through the gateway (a failover not followed, or the gateway down)",
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
      alarm("Gateway5xx", {
        metric: all5xx,
        alarmDescription: "The gateway answers 5xx (database unavailable, pool timeouts, failover waits)",
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        threshold: 10,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      alarm("GatewayLatency", {
        metric: latency,
        alarmDescription: "p99 response time of the gateway above 1 s: requests wait for pool connections or the database",
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        threshold: 1,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      alarm("PoolWaitTime", {
        metric: poolWait,
        alarmDescription: "Requests wait more than 500 ms (p99) for a writer connection in some gateway task: the pool or the database is saturated",
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        threshold: 500,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      alarm("UnhealthyTargets", {
        metric: unhealthy,
        alarmDescription: "A gateway task fails its /readyz health check",
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        threshold: 1,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    ];

    this.dashboard = new cloudwatch.Dashboard(this, "Dashboard", { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: "Canary success", left: [canarySuccess], width: 8 }),
      new cloudwatch.GraphWidget({ title: "Canary latency p99 (ms)", left: [canaryLatency], width: 8 }),
      new cloudwatch.GraphWidget({ title: "Gateway requests and 5xx", left: [lb.requestCount({ period: Duration.minutes(1) })], right: [target5xx], width: 8 }),
      new cloudwatch.GraphWidget({ title: "Gateway response time p99 (s)", left: [latency], width: 8 }),
      new cloudwatch.GraphWidget({ title: "Writer pool: acquire wait p99 (ms) and waiting callers", left: [poolWait], right: [poolWaiting], width: 8 }),
      new cloudwatch.GraphWidget({
        title: "Gateway tasks",
        left: [gateway.targetGroup.metrics.healthyHostCount({ period: Duration.minutes(1) }), unhealthy],
        right: [gateway.service.metricCpuUtilization(), gateway.service.metricMemoryUtilization()],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: "Aurora connections and replica lag",
        left: [database.cluster.metricDatabaseConnections()],
        right: [database.cluster.metric("AuroraReplicaLagMaximum", { statistic: "Maximum" })],
        width: 8,
      }),
    );
  }
}
