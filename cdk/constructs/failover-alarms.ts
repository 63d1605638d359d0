/**
 * The alarms of the failover story, each to the SNS topic (alarm and OK). Missing data is treated by
 * what its absence means:
 * - availability signals that report whenever things work (the canary's CanarySuccess, the target
 *   group's HealthyHostCount) treat missing data as breaching: silence means the canary stopped or no
 *   task is registered at all;
 * - error and saturation signals (5xx, latency, pool wait, unhealthy targets, function errors, dead
 *   letters, database connections, CPU, memory, replica lag) treat it as not breaching: no requests,
 *   no invocations or no replicas is not a fault, and an unreachable database is the canary's alarm.
 * Database metrics use Aurora's role dimension (WRITER / READER), which follows a failover, rather than
 * instance names, which do not. Without a topology (Aurora DSQL: no instances) the database alarms,
 * and without a hook its alarms, are not created.
 */
import { Duration, aws_cloudwatch as cloudwatch, aws_cloudwatch_actions as actions, type aws_lambda as lambda, type aws_sns as sns, type aws_sqs as sqs } from "aws-cdk-lib";
import { HttpCodeElb, HttpCodeTarget } from "aws-cdk-lib/aws-elasticloadbalancingv2";
import { Construct } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import type { PoolgateGateway } from "./gateway-service.js";
import { INSTANCE_MEMORY_GIB } from "./pool-budget.js";

export interface FailoverAlarmsProps {
  gateway: PoolgateGateway;
  /** The Aurora cluster and its reader instances (the replica-lag and reader alarms exist only with readers); undefined for DSQL. */
  topology: { database: PoolgateDatabase; readers: number } | undefined;
  topic: sns.ITopic;
  canary: lambda.IFunction;
  /** The failover hook and the events' dead-letter queue, where they exist. */
  hook: lambda.IFunction | undefined;
  deadLetters: sqs.IQueue | undefined;
}

/** Metrics the alarms watch and the dashboard shows (the database's only with a topology). */
export type FailoverMetrics = Record<"canarySuccess" | "canaryLatency" | "poolWait" | "poolWaiting" | "target5xx" | "latency" | "healthy" | "unhealthy", cloudwatch.IMetric> &
  Partial<Record<"writerConnections" | "readerConnections" | "replicaLag", cloudwatch.IMetric>>;

const minute = Duration.minutes(1);
/** Share of an instance's memory below which FreeableMemory alarms. */
const FREEABLE_MEMORY_FLOOR = 0.1;

export class FailoverAlarms extends Construct {
  /** The alarms, by construct id. */
  readonly alarms: Record<string, cloudwatch.Alarm> = {};
  readonly metrics: FailoverMetrics;

  constructor(scope: Construct, id: string, props: FailoverAlarmsProps) {
    super(scope, id);
    const { gateway, topology } = props;
    const poolgate = (metricName: string, dimensionsMap: Record<string, string>, statistic: string) =>
      new cloudwatch.Metric({ namespace: "Poolgate", metricName, dimensionsMap, statistic, period: minute });
    const lb = gateway.loadBalancer.metrics;
    const target5xx = lb.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, { period: minute, statistic: "Sum" });
    this.metrics = {
      canarySuccess: poolgate("CanarySuccess", { service: "poolgate-canary" }, "Minimum"),
      canaryLatency: poolgate("CanaryLatency", { service: "poolgate-canary" }, "p99"),
      poolWait: poolgate("PoolAcquireWaitP99", { cluster: gateway.clusterName, endpoint: `${gateway.clusterName}/writer` }, "Maximum"),
      poolWaiting: poolgate("PoolWaiting", { cluster: gateway.clusterName, endpoint: `${gateway.clusterName}/writer` }, "Maximum"),
      target5xx,
      latency: lb.targetResponseTime({ period: minute, statistic: "p99" }),
      healthy: gateway.targetGroup.metrics.healthyHostCount({ period: minute, statistic: "Minimum" }),
      unhealthy: gateway.targetGroup.metrics.unhealthyHostCount({ period: minute, statistic: "Maximum" }),
    };
    // The load balancer's own 502/503s (no healthy task) count too.
    const all5xx = new cloudwatch.MathExpression({
      expression: "FILL(target, 0) + FILL(elb, 0)",
      usingMetrics: { target: target5xx, elb: lb.httpCodeElb(HttpCodeElb.ELB_5XX_COUNT, { period: minute, statistic: "Sum" }) },
      label: "5xx (gateway and load balancer)",
      period: minute,
    });
    const action = new actions.SnsAction(props.topic);
    const alarm = (name: string, options: cloudwatch.CreateAlarmOptions & { metric: cloudwatch.IMetric }) => {
      const created = new cloudwatch.Alarm(this, name, { ...options, metric: options.metric });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms[name] = created;
    };
    const { GREATER_THAN_THRESHOLD: above, GREATER_THAN_OR_EQUAL_TO_THRESHOLD: atLeast, LESS_THAN_THRESHOLD: below } = cloudwatch.ComparisonOperator;
    const { BREACHING: breaching, NOT_BREACHING: notBreaching } = cloudwatch.TreatMissingData;

    alarm("CanaryFailing", {
      metric: this.metrics.canarySuccess,
      alarmDescription: "The canary could not write and read back through the gateway and on every task (a failover not followed, a task or the gateway down); silence counts too",
      comparisonOperator: below, threshold: 1, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: breaching,
    });
    alarm("HealthyTargetsBelowMinimum", {
      metric: this.metrics.healthy,
      alarmDescription: `Fewer than ${gateway.minTasks} gateway tasks pass their health check (no data: no task registered at all)`,
      comparisonOperator: below, threshold: gateway.minTasks, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: breaching,
    });
    alarm("UnhealthyTargets", {
      metric: this.metrics.unhealthy,
      alarmDescription: "A gateway task fails its /readyz health check",
      comparisonOperator: atLeast, threshold: 1, evaluationPeriods: 2, treatMissingData: notBreaching,
    });
    alarm("Gateway5xx", {
      metric: all5xx,
      alarmDescription: "The gateway answers 5xx (database unavailable, pool timeouts, failover waits)",
      comparisonOperator: atLeast, threshold: 10, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: notBreaching,
    });
    alarm("GatewayLatency", {
      metric: this.metrics.latency,
      alarmDescription: "p99 response time of the gateway above 1 s: requests wait for pool connections or the database",
      comparisonOperator: above, threshold: 1, evaluationPeriods: 5, datapointsToAlarm: 3, treatMissingData: notBreaching,
    });
    alarm("PoolWaitTime", {
      metric: this.metrics.poolWait,
      alarmDescription: "Requests wait more than 500 ms (p99) for a writer connection in some gateway task: the pool or the database is saturated",
      comparisonOperator: above, threshold: 500, evaluationPeriods: 5, datapointsToAlarm: 3, treatMissingData: notBreaching,
    });
    if (topology) this.databaseAlarms(gateway, topology.database, topology.readers, alarm);
    if (props.hook) {
      alarm("HookErrors", {
        metric: props.hook.metricErrors({ period: minute, statistic: "Sum" }),
        alarmDescription: "The failover hook failed to reach the gateway's tasks after an RDS event",
        comparisonOperator: atLeast, threshold: 1, evaluationPeriods: 1, treatMissingData: notBreaching,
      });
    }
    alarm("CanaryErrors", {
      metric: props.canary.metricErrors({ period: minute, statistic: "Sum" }),
      alarmDescription: "The canary function fails (its checks failed, or it could not run)",
      comparisonOperator: atLeast, threshold: 1, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: notBreaching,
    });
    if (props.deadLetters) {
      alarm("FailoverDeadLetters", {
        metric: props.deadLetters.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: "Maximum" }),
        alarmDescription: "RDS events that reached neither the hook nor the topic, or hook runs that failed for good, wait in the dead-letter queue",
        comparisonOperator: atLeast, threshold: 1, evaluationPeriods: 1, treatMissingData: notBreaching,
      });
    }
  }

  /** The Aurora cluster's connections, CPU, memory (per role) and replica lag. */
  private databaseAlarms(
    gateway: PoolgateGateway,
    database: PoolgateDatabase,
    readers: number,
    alarm: (name: string, options: cloudwatch.CreateAlarmOptions & { metric: cloudwatch.IMetric }) => void,
  ): void {
    const aurora = (metricName: string, role: "WRITER" | "READER", statistic: string) =>
      new cloudwatch.Metric({ namespace: "AWS/RDS", metricName, dimensionsMap: { DBClusterIdentifier: database.cluster.clusterIdentifier, Role: role }, statistic, period: minute });
    const { GREATER_THAN_THRESHOLD: above, LESS_THAN_THRESHOLD: below } = cloudwatch.ComparisonOperator;
    const notBreaching = cloudwatch.TreatMissingData.NOT_BREACHING;
    const metrics = {
      writerConnections: aurora("DatabaseConnections", "WRITER", "Maximum"),
      readerConnections: aurora("DatabaseConnections", "READER", "Maximum"),
      replicaLag: database.cluster.metric("AuroraReplicaLagMaximum", { statistic: "Maximum", period: minute }),
    };
    Object.assign(this.metrics, metrics);
    const roles: ("WRITER" | "READER")[] = readers > 0 ? ["WRITER", "READER"] : ["WRITER"];
    for (const role of roles) {
      const suffix = role === "WRITER" ? "Writer" : "Readers";
      alarm(`DatabaseConnections${suffix}`, {
        metric: role === "WRITER" ? metrics.writerConnections : metrics.readerConnections,
        alarmDescription: `${role} connections above ${gateway.budget.ceiling} (80% of max_connections ${gateway.budget.maxConnections}, the gateways' budget plus the reserved connections): something besides the gateway holds connections, or the budget is wrong`,
        comparisonOperator: above, threshold: gateway.budget.ceiling, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: notBreaching,
      });
      alarm(`DatabaseCpu${suffix}`, {
        metric: aurora("CPUUtilization", role, "Maximum"),
        alarmDescription: `${role} CPU above 80% for 5 minutes: a failover to a saturated instance is slow, and the pools queue`,
        comparisonOperator: above, threshold: 80, evaluationPeriods: 5, treatMissingData: notBreaching,
      });
      const memoryGib = INSTANCE_MEMORY_GIB[database.instanceClass];
      if (memoryGib !== undefined) {
        alarm(`DatabaseMemory${suffix}`, {
          metric: aurora("FreeableMemory", role, "Minimum"),
          alarmDescription: `${role} freeable memory below ${FREEABLE_MEMORY_FLOOR * 100}% of db.${database.instanceClass}'s ${memoryGib} GiB`,
          comparisonOperator: below, threshold: Math.round(FREEABLE_MEMORY_FLOOR * memoryGib * 1024 ** 3), evaluationPeriods: 5, treatMissingData: notBreaching,
        });
      }
    }
    if (readers > 0) {
      alarm("ReplicaLag", {
        metric: metrics.replicaLag,
        alarmDescription: "A replica lags the writer by more than 2 s for 5 minutes: reads routed there are stale, and a failover to it loses time",
        comparisonOperator: above, threshold: 2000, evaluationPeriods: 5, treatMissingData: notBreaching,
      });
    }
  }
}
