/**
 * The failover health checks as CloudFormation sees them: every alarm with its metric, threshold and
 * missing-data treatment, all wired to the topic; the RDS event rules with the catalogue's event IDs,
 * both targets (the hook and the topic) with retries and a dead-letter queue; the hook's failed runs
 * in the same queue; the topic's key open to CloudWatch and EventBridge.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLUE_GREEN_EVENT_IDS, CLUSTER_EVENT_IDS, INSTANCE_EVENT_IDS } from "./constructs/failover-events.js";
import type { PoolgateApp } from "./lib/app.js";
import { build, logicalIdOf, removeBuilds } from "./test-support.js";

let built: PoolgateApp;
let service: Template;

beforeAll(() => {
  built = build();
  service = Template.fromStack(built.service);
}, 120000);

afterAll(removeBuilds);

interface AlarmProperties {
  MetricName?: string;
  Namespace?: string;
  Threshold: number;
  ComparisonOperator: string;
  TreatMissingData: string;
  Dimensions?: { Name: string; Value: unknown }[];
  AlarmActions: unknown[];
  OKActions: unknown[];
}

function alarms(template: Template): Record<string, AlarmProperties> {
  const found: Record<string, AlarmProperties> = {};
  // The failover alarms only (auto scaling's own alarms live with the service).
  for (const [id, alarm] of Object.entries(template.findResources("AWS::CloudWatch::Alarm")).filter(([id]) => id.startsWith("FailoverHealthFailoverAlarms"))) found[id.replace(/FailoverHealthFailoverAlarms|[0-9A-F]{8}$/g, "")] = alarm.Properties as AlarmProperties;
  return found;
}

describe("the alarms", () => {
  it("cover the failover story, each with the missing-data treatment its absence means", () => {
    const found = alarms(service);
    const expected: Record<string, [metric: string | undefined, operator: string, threshold: number, missing: string]> = {
      CanaryFailing: ["CanarySuccess", "LessThanThreshold", 1, "breaching"],
      HealthyTargetsBelowMinimum: ["HealthyHostCount", "LessThanThreshold", 2, "breaching"],
      UnhealthyTargets: ["UnHealthyHostCount", "GreaterThanOrEqualToThreshold", 1, "notBreaching"],
      Gateway5xx: [undefined, "GreaterThanOrEqualToThreshold", 10, "notBreaching"],
      GatewayLatency: ["TargetResponseTime", "GreaterThanThreshold", 1, "notBreaching"],
      PoolWaitTime: ["PoolAcquireWaitP99", "GreaterThanThreshold", 500, "notBreaching"],
      DatabaseConnectionsWriter: ["DatabaseConnections", "GreaterThanThreshold", 1328, "notBreaching"],
      DatabaseConnectionsReaders: ["DatabaseConnections", "GreaterThanThreshold", 1328, "notBreaching"],
      DatabaseCpuWriter: ["CPUUtilization", "GreaterThanThreshold", 80, "notBreaching"],
      DatabaseCpuReaders: ["CPUUtilization", "GreaterThanThreshold", 80, "notBreaching"],
      DatabaseMemoryWriter: ["FreeableMemory", "LessThanThreshold", Math.round(0.1 * 16 * 1024 ** 3), "notBreaching"],
      DatabaseMemoryReaders: ["FreeableMemory", "LessThanThreshold", Math.round(0.1 * 16 * 1024 ** 3), "notBreaching"],
      ReplicaLag: ["AuroraReplicaLagMaximum", "GreaterThanThreshold", 2000, "notBreaching"],
      HookErrors: ["Errors", "GreaterThanOrEqualToThreshold", 1, "notBreaching"],
      CanaryErrors: ["Errors", "GreaterThanOrEqualToThreshold", 1, "notBreaching"],
      FailoverDeadLetters: ["ApproximateNumberOfMessagesVisible", "GreaterThanOrEqualToThreshold", 1, "notBreaching"],
    };
    expect(Object.keys(found).sort()).toEqual(Object.keys(expected).sort());
    const topic = { Ref: logicalIdOf(built.service, built.service.health.topic) };
    for (const [name, [metric, operator, threshold, missing]] of Object.entries(expected)) {
      const alarm = found[name];
      expect({ name, metric: alarm?.MetricName, operator: alarm?.ComparisonOperator, threshold: alarm?.Threshold, missing: alarm?.TreatMissingData }).toEqual({ name, metric, operator, threshold, missing });
      expect(alarm?.AlarmActions).toEqual([topic]);
      expect(alarm?.OKActions).toEqual([topic]);
    }
  });

  it("watch the database by role (WRITER / READER), which follows a failover, and the 5xx of the gateway and the load balancer together", () => {
    const found = alarms(service);
    for (const name of ["DatabaseConnectionsWriter", "DatabaseCpuWriter", "DatabaseMemoryWriter"]) expect(found[name]?.Dimensions).toEqual(expect.arrayContaining([{ Name: "Role", Value: "WRITER" }]));
    for (const name of ["DatabaseConnectionsReaders", "DatabaseCpuReaders", "DatabaseMemoryReaders"]) expect(found[name]?.Dimensions).toEqual(expect.arrayContaining([{ Name: "Role", Value: "READER" }]));
    service.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "FILL(target, 0) + FILL(elb, 0)" }),
        Match.objectLike({ Id: "target", MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: "HTTPCode_Target_5XX_Count" }) }) }),
        Match.objectLike({ Id: "elb", MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: "HTTPCode_ELB_5XX_Count" }) }) }),
      ]),
    });
  });

  it("leave out the reader and replica-lag alarms of a cluster without readers", () => {
    const names = Object.keys(alarms(Template.fromStack(build({ readers: "0" }).service)));
    expect(names.filter((name) => /Readers|ReplicaLag/.test(name))).toEqual([]);
    expect(names).toContain("DatabaseCpuWriter");
  }, 60000);

  it("publish through a key that CloudWatch and EventBridge may use", () => {
    service.hasResourceProperties("AWS::KMS::Key", {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: ["cloudwatch.amazonaws.com", "events.amazonaws.com"] }, Action: ["kms:Decrypt", "kms:GenerateDataKey*"] }),
        ]),
      },
    });
  });
});

describe("the RDS event rules", () => {
  const present = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("an Aurora stack has the failover hook and the event rules");
    return value;
  };
  const hookId = () => logicalIdOf(built.service, present(built.service.health.hook).function);
  const queueId = () => logicalIdOf(built.service, present(built.service.health.events).deadLetters);

  it("match the cluster's failover, global-database, patching and start/stop events, and its instances' reboots, patching and recovery", () => {
    const clusterOutput = Match.stringLikeRegexp(`^PublishOutputRef${logicalIdOf(built.database, built.database.database.cluster)}`);
    service.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["aws.rds"],
        "detail-type": ["RDS DB Cluster Event"],
        detail: { EventID: Object.values(CLUSTER_EVENT_IDS).flat(), SourceIdentifier: [{ "Fn::GetStackOutput": { StackName: "PoolgateDatabase", Region: "us-east-1", OutputName: clusterOutput } }] },
      },
    });
    const instanceRule = Object.values(service.findResources("AWS::Events::Rule", { Properties: { EventPattern: { "detail-type": ["RDS DB Instance Event"] } } }))[0];
    expect(instanceRule?.Properties.EventPattern.detail.EventID).toEqual(Object.values(INSTANCE_EVENT_IDS).flat());
    // Every instance of the cluster (writer and reader) by its identifier.
    expect(instanceRule?.Properties.EventPattern.detail.SourceIdentifier).toHaveLength(2);
    service.hasResourceProperties("AWS::Events::Rule", { EventPattern: { source: ["aws.rds"], detail: { EventID: [...BLUE_GREEN_EVENT_IDS] } } });
    // Failovers (start 0072/0073, done 0071), reboots (0006), patching (0026/0027), global switchovers, blue/green.
    const all = [...Object.values(CLUSTER_EVENT_IDS).flat(), ...Object.values(INSTANCE_EVENT_IDS).flat(), ...BLUE_GREEN_EVENT_IDS];
    for (const id of ["RDS-EVENT-0071", "RDS-EVENT-0072", "RDS-EVENT-0073", "RDS-EVENT-0006", "RDS-EVENT-0026", "RDS-EVENT-0027", "RDS-EVENT-0185", "RDS-EVENT-0238", "RDS-EVENT-0260"]) expect(all).toContain(id);
    // Blue/green: the deployment's switchover started / completed / cancelled and the cluster's, and the
    // sequence sync that keeps writes blocked longer; not creation or deletion of the deployment.
    expect([...BLUE_GREEN_EVENT_IDS].sort()).toEqual(["RDS-EVENT-0247", "RDS-EVENT-0248", "RDS-EVENT-0249", "RDS-EVENT-0259", "RDS-EVENT-0260", "RDS-EVENT-0261", "RDS-EVENT-0311", "RDS-EVENT-0312", "RDS-EVENT-0314"]);
    expect(new Set(all).size).toBe(all.length);
  });

  it("send each event to the hook and, as a readable line, to the topic, with retries and the dead-letter queue", () => {
    const rules = Object.values(service.findResources("AWS::Events::Rule", { Properties: { EventPattern: { source: ["aws.rds"] } } }));
    expect(rules).toHaveLength(3);
    const topic = { Ref: logicalIdOf(built.service, built.service.health.topic) };
    for (const rule of rules) {
      const targets = rule.Properties.Targets as Record<string, unknown>[];
      expect(targets).toHaveLength(2);
      expect(targets).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Arn: { "Fn::GetAtt": [hookId(), "Arn"] }, DeadLetterConfig: { Arn: { "Fn::GetAtt": [queueId(), "Arn"] } }, RetryPolicy: { MaximumRetryAttempts: 4, MaximumEventAgeInSeconds: 300 } }),
          expect.objectContaining({ Arn: topic, DeadLetterConfig: { Arn: { "Fn::GetAtt": [queueId(), "Arn"] } }, InputTransformer: expect.objectContaining({ InputPathsMap: expect.objectContaining({ "detail-EventID": "$.detail.EventID" }) }) }),
        ]),
      );
    }
    // A hook run that still fails after Lambda's retries lands in the same queue.
    service.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: hookId() },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queueId(), "Arn"] } } },
    });
    service.hasResourceProperties("AWS::SQS::Queue", { SqsManagedSseEnabled: true, MessageRetentionPeriod: 1209600 });
    // EventBridge may write to the queue, only for these rules.
    service.hasResourceProperties("AWS::SQS::QueuePolicy", {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: "sqs:SendMessage", Principal: { Service: "events.amazonaws.com" }, Condition: Match.anyValue() })]) },
    });
  });

  it("run the canary every minute without retries", () => {
    service.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 minute)", Targets: [Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 0 } })] });
  });
});
