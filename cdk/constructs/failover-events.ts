/**
 * The RDS events that change what the gateway sees — failovers, instance reboots and restarts,
 * patching, global-database switchovers and failovers, blue/green switchovers — routed by EventBridge
 * to the failover hook (which asks every gateway task to look at its topology at once) and, as a
 * readable line, to the alarm topic. Deliveries that fail, and hook invocations that still fail after
 * their retries, land in a dead-letter queue (alarmed in failover-alarms.ts).
 *
 * Every event ID below was checked against the Aurora User Guide's catalogue ("Amazon RDS event
 * categories and event messages for Aurora"). Events are best effort and unordered: they only speed
 * things up; the gateway's own monitor stays the judge.
 */
import { Duration, aws_events as events, aws_events_targets as targets, aws_lambda as lambda, aws_lambda_destinations as destinations, aws_sns as sns, aws_sqs as sqs } from "aws-cdk-lib";
import { Construct } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";

/** "RDS DB Cluster Event"s of the cluster (SourceIdentifier: the cluster). */
export const CLUSTER_EVENT_IDS = {
  /** Failover failed, promoting the previous primary again, completed, started same-AZ, started cross-AZ. */
  failover: ["RDS-EVENT-0069", "RDS-EVENT-0070", "RDS-EVENT-0071", "RDS-EVENT-0072", "RDS-EVENT-0073"],
  /**
   * Global database: switchover started, old primary shut down, new primary promoted, switchover
   * finished / cancelled / failed; global failover completed / failed; the global writer endpoint's DNS changed.
   */
  globalDatabase: ["RDS-EVENT-0181", "RDS-EVENT-0182", "RDS-EVENT-0184", "RDS-EVENT-0185", "RDS-EVENT-0186", "RDS-EVENT-0187", "RDS-EVENT-0238", "RDS-EVENT-0239", "RDS-EVENT-0397"],
  /**
   * Patching and upgrades: engine version upgraded (patching completed), major version upgraded, upgrade
   * in progress, upgrade started (cluster online), OS upgrade starting / completed, cluster patched,
   * offline patches starting on a partition of instances.
   */
  patching: ["RDS-EVENT-0173", "RDS-EVENT-0176", "RDS-EVENT-0177", "RDS-EVENT-0286", "RDS-EVENT-0288", "RDS-EVENT-0289", "RDS-EVENT-0290", "RDS-EVENT-0388"],
  /** The cluster stopped, started. */
  stopStart: ["RDS-EVENT-0150", "RDS-EVENT-0151"],
} as const;

/** "RDS DB Instance Event"s of the cluster's instances (SourceIdentifier: the instance). */
export const INSTANCE_EVENT_IDS = {
  /** Shutdown, restarted, error restarting (Aurora MySQL). */
  rebootAndRestart: ["RDS-EVENT-0004", "RDS-EVENT-0006", "RDS-EVENT-0022"],
  /** Offline patches applying / finished, instance patched, upgrade in progress. */
  patching: ["RDS-EVENT-0026", "RDS-EVENT-0027", "RDS-EVENT-0047", "RDS-EVENT-0178"],
  /** Recovery started / complete, stopped, started, the cluster's topology (DNS) updated. */
  recoveryAndTopology: ["RDS-EVENT-0020", "RDS-EVENT-0021", "RDS-EVENT-0087", "RDS-EVENT-0088", "RDS-EVENT-0385"],
} as const;

/**
 * Blue/green switchovers, from the Aurora User Guide's "Blue/green deployment events" table (source
 * type: the blue/green deployment, which the stack cannot name in advance, so the rule matches these
 * IDs for any deployment of the account and region):
 * - the deployment's switchover started (0247), completed (0248), cancelled (0249);
 * - its DB cluster's switchover started (0259), completed, the green cluster renamed to the blue one's
 *   name and the blue one to `-old` (0260), cancelled (0261);
 * - Aurora PostgreSQL sequence sync for the switchover initiated (0311: "may lead to extended
 *   downtime", writes stay blocked longer), completed (0312), cancelled (0314).
 * Creation (0244), creation failure (0245) and deletion (0246) change nothing the gateway sees.
 */
export const BLUE_GREEN_EVENT_IDS = [
  "RDS-EVENT-0247",
  "RDS-EVENT-0248",
  "RDS-EVENT-0249",
  "RDS-EVENT-0259",
  "RDS-EVENT-0260",
  "RDS-EVENT-0261",
  "RDS-EVENT-0311",
  "RDS-EVENT-0312",
  "RDS-EVENT-0314",
] as const;

export interface FailoverEventsProps {
  database: PoolgateDatabase;
  hook: lambda.Function;
  topic: sns.ITopic;
}

export class FailoverEvents extends Construct {
  readonly rules: events.Rule[];
  readonly deadLetters: sqs.Queue;

  constructor(scope: Construct, id: string, props: FailoverEventsProps) {
    super(scope, id);
    const { database } = props;
    this.deadLetters = new sqs.Queue(this, "DeadLetters", {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    // A hook invocation that fails after Lambda's own retries goes to the same queue as failed deliveries.
    props.hook.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.minutes(5), onFailure: new destinations.SqsDestination(this.deadLetters) });
    const hookTarget = new targets.LambdaFunction(props.hook, { deadLetterQueue: this.deadLetters, retryAttempts: 4, maxEventAge: Duration.minutes(5) });
    const notice = events.RuleTargetInput.fromText(
      `Aurora ${events.EventField.fromPath("$.detail.EventID")} on ${events.EventField.fromPath("$.detail.SourceIdentifier")} at ${events.EventField.time}: ${events.EventField.fromPath("$.detail.Message")}`,
    );
    const topicTarget = new targets.SnsTopic(props.topic, { message: notice, deadLetterQueue: this.deadLetters, retryAttempts: 4, maxEventAge: Duration.hours(1) });
    const rule = (name: string, description: string, eventPattern: events.EventPattern) =>
      new events.Rule(this, name, { description, eventPattern, targets: [hookTarget, topicTarget] });
    this.rules = [
      rule("ClusterEvents", "Aurora failovers, global switchovers, patching and restarts of the gateway's cluster", {
        source: ["aws.rds"],
        detailType: ["RDS DB Cluster Event"],
        detail: { EventID: Object.values(CLUSTER_EVENT_IDS).flat(), SourceIdentifier: [database.cluster.clusterIdentifier] },
      }),
      rule("InstanceEvents", "Reboots, restarts, patching and recovery of the gateway's cluster's instances", {
        source: ["aws.rds"],
        detailType: ["RDS DB Instance Event"],
        detail: { EventID: Object.values(INSTANCE_EVENT_IDS).flat(), SourceIdentifier: database.cluster.instanceIdentifiers },
      }),
      rule("BlueGreenEvents", "Blue/green switchovers of Aurora deployments in this account and region", {
        source: ["aws.rds"],
        detail: { EventID: [...BLUE_GREEN_EVENT_IDS] },
      }),
    ];
  }
}
