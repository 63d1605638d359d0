/**
 * The CDK app, synthesised in memory (offline: no credentials, no Docker, no lookups) and checked for
 * invariants rather than snapshots: no public database, encrypted storage, health checks tuned for fast
 * replacement, alarms wired to the topic, callers with only the access they need, the failover rule's
 * pattern, the connection budget, and cdk-nag's AwsSolutions rules (a finding fails synth).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { App, Stack, Validations, aws_s3 as s3 } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../gateway/config/load.js";
import { FAILOVER_EVENT_IDS } from "./constructs/failover-health.js";
import { MAX_CONNECTIONS, poolBudget, PoolBudgetError } from "./constructs/pool-budget.js";
import { buildPoolgateApp, type PoolgateApp } from "./lib/app.js";

const projectRoot = fileURLToPath(new URL("..", import.meta.url));
const outdirs: string[] = [];

function build(context: Record<string, string> = {}): PoolgateApp {
  const outdir = mkdtempSync(join(tmpdir(), "poolgate-cdk-"));
  outdirs.push(outdir);
  return buildPoolgateApp({ projectRoot, context, outdir });
}

let built: PoolgateApp;
let database: Template;
let service: Template;

beforeAll(() => {
  built = build();
  // Synthesises the whole app: cdk-nag runs as a validation plugin and throws on a finding.
  built.app.synth();
  database = Template.fromStack(built.database);
  service = Template.fromStack(built.service);
}, 120000);

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

describe("the database stack", () => {
  it("keeps the database private, encrypted, backed up, IAM-authenticated and deletion-protected", () => {
    database.hasResourceProperties("AWS::RDS::DBCluster", {
      Engine: "aurora-postgresql",
      StorageEncrypted: true,
      EnableIAMDatabaseAuthentication: true,
      DeletionProtection: true,
      BackupRetentionPeriod: 7,
    });
    const instances = database.findResources("AWS::RDS::DBInstance");
    expect(Object.keys(instances)).toHaveLength(2);
    for (const instance of Object.values(instances)) expect(instance.Properties.PubliclyAccessible).toBe(false);
    // The subnet group holds only isolated subnets: no route to an internet or NAT gateway.
    const subnetGroup = Object.values(database.findResources("AWS::RDS::DBSubnetGroup"))[0];
    const isolated = Object.entries(database.findResources("AWS::EC2::Subnet")).filter(([, subnet]) =>
      (subnet.Properties.Tags as { Key: string; Value: string }[]).some((tag) => tag.Key === "aws-cdk:subnet-type" && tag.Value === "Isolated"),
    );
    const ids = (subnetGroup?.Properties.SubnetIds as { Ref: string }[]).map((ref) => ref.Ref);
    expect(new Set(ids)).toEqual(new Set(isolated.map(([logicalId]) => logicalId)));
    // Rotated automatically: the gateway reads the secret again when a login is refused.
    database.resourceCountIs("AWS::SecretsManager::RotationSchedule", 1);
    database.resourceCountIs("AWS::SecretsManager::Secret", 1);
    database.hasResourceProperties("AWS::EC2::FlowLog", { TrafficType: "ALL" });
  });

  it("selects MySQL on request, with the canary writing MySQL's SQL and without the PostgreSQL example API", () => {
    const mysql = build({ engine: "mysql" });
    mysql.app.synth();
    Template.fromStack(mysql.database).hasResourceProperties("AWS::RDS::DBCluster", { Engine: "aurora-mysql", Port: 3306 });
    const functions = Object.values(Template.fromStack(mysql.service).findResources("AWS::Lambda::Function")).map((fn) => fn.Properties.Environment?.Variables ?? {});
    expect(functions.find((variables) => variables.POWERTOOLS_SERVICE_NAME === "poolgate-canary")?.POOLGATE_ENGINE).toBe("mysql");
    expect(functions.some((variables) => variables.POWERTOOLS_SERVICE_NAME === "notes-api")).toBe(false);
  });
});

describe("the service stack", () => {
  it("health-checks /readyz fast, drains within the stop timeout and scales", () => {
    service.hasResourceProperties("AWS::ElasticLoadBalancingV2::LoadBalancer", { Scheme: "internal" });
    service.hasResourceProperties("AWS::ElasticLoadBalancingV2::TargetGroup", {
      HealthCheckPath: "/readyz",
      HealthCheckIntervalSeconds: 5,
      HealthCheckTimeoutSeconds: 2,
      HealthyThresholdCount: 2,
      UnhealthyThresholdCount: 2,
      TargetGroupAttributes: Match.arrayWith([
        { Key: "deregistration_delay.timeout_seconds", Value: "15" },
        { Key: "stickiness.enabled", Value: "true" },
        { Key: "stickiness.type", Value: "lb_cookie" },
        { Key: "load_balancing.algorithm.type", Value: "least_outstanding_requests" },
      ]),
    });
    service.hasResourceProperties("AWS::ECS::Service", {
      HealthCheckGracePeriodSeconds: 30,
      DeploymentConfiguration: Match.objectLike({ MaximumPercent: 200, MinimumHealthyPercent: 100, DeploymentCircuitBreaker: { Enable: true, Rollback: true } }),
    });
    const container = (Object.values(service.findResources("AWS::ECS::TaskDefinition"))[0]?.Properties.ContainerDefinitions as Record<string, unknown>[])[0];
    expect(container?.StopTimeout).toBe(30);
    // The task reads the database credentials from the secret itself; only the peer key is an ECS secret.
    expect((container?.Secrets as { Name: string }[]).map((secret) => secret.Name)).toEqual(["POOLGATE_PEER_KEY"]);
    const environment = JSON.stringify(container?.Environment);
    expect(environment).not.toMatch(/password/i);
    expect(environment).toMatch(/\\"credentials\\":\{\\"source\\":\\"secrets-manager\\"/);
    expect(environment).toMatch(/\\"tls\\":\{\\"mode\\":\\"verify-full\\",\\"caFile\\":\\"\/etc\/ssl\/certs\/rds-global-bundle.pem\\"\}/);
    // Callers authenticate by IAM role: the gateway trusts proofs signed for its audience in its region.
    expect(environment).toMatch(/\\"auth\\":\{\\"iam\\":\{\\"audience\\":\\"[A-Za-z0-9]+\\"/);
    expect(environment).toContain("instanceHostPattern");
    // The pool-wait alarm's metric comes from the gateway's EMF output.
    expect(environment).toMatch(/\\"emf\\":\{\\"enabled\\":true/);
    service.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", { MinCapacity: 2, MaxCapacity: 6 });
    service.resourceCountIs("AWS::ApplicationAutoScaling::ScalingPolicy", 2);
  });

  it("alarms on canary failures, 5xx, latency, pool wait time and unhealthy targets, to the SNS topic", () => {
    const alarms = service.findResources("AWS::CloudWatch::Alarm");
    const metrics = Object.values(alarms).flatMap((alarm) =>
      alarm.Properties.MetricName ? [alarm.Properties.MetricName as string] : (alarm.Properties.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : [])),
    );
    expect(metrics.sort()).toEqual(["CanarySuccess", "HTTPCode_ELB_5XX_Count", "HTTPCode_Target_5XX_Count", "PoolAcquireWaitP99", "TargetResponseTime", "UnHealthyHostCount"]);
    // The topic's key lets CloudWatch publish.
    service.hasResourceProperties("AWS::KMS::Key", {
      EnableKeyRotation: true,
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: "cloudwatch.amazonaws.com" }, Action: ["kms:Decrypt", "kms:GenerateDataKey*"] })]) },
    });
    const topic = Object.keys(service.findResources("AWS::SNS::Topic"))[0];
    for (const alarm of Object.values(alarms)) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topic }]);
    service.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
  });

  it("sends the cluster's failover events to the hook, and runs the canary on a schedule", () => {
    service.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: { source: ["aws.rds"], "detail-type": ["RDS DB Cluster Event"], detail: { EventID: FAILOVER_EVENT_IDS, SourceIdentifier: Match.anyValue() } },
    });
    service.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 minute)" });
  });

  it("passes the gateway a configuration it accepts, once CloudFormation fills in the references", () => {
    const task = Object.values(service.findResources("AWS::ECS::TaskDefinition"))[0];
    const variables = (task?.Properties.ContainerDefinitions as { Environment: { Name: string; Value: unknown }[] }[])[0]?.Environment ?? [];
    const value = variables.find((variable) => variable.Name === "POOLGATE_CONFIG_JSON")?.Value as { "Fn::Join": [string, unknown[]] };
    // Each reference becomes a plausible value of its kind: a role ARN, the secret's ARN, a host.
    const filled = value["Fn::Join"][1]
      .map((part, i) => {
        if (typeof part === "string") return part;
        const reference = JSON.stringify(part);
        if (/Role/.test(reference)) return `arn:aws:iam::123456789012:role/caller${i}`;
        if (/Secret|Token/.test(reference)) return "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf";
        return `db${i}.cluster-abc123.us-east-1.rds.amazonaws.com`;
      })
      .join("");
    const config = parseConfig(JSON.parse(filled), "the stack's POOLGATE_CONFIG_JSON");
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.auth.iam?.regions).toEqual(["us-east-1"]);
    // The three functions' roles, and the operators' bearer token (read from its secret).
    expect(Object.keys(config.auth.principals)).toHaveLength(4);
    expect(config.auth.principals.operator).toMatchObject({ admin: true, clusters: {} });
    expect(config.auth.bearer?.secretArn).toMatch(/^arn:aws:secretsmanager:/);
  });

  it("gives the Lambda callers the gateway's URL, audience and network path, grants their roles, and no database or secret access", () => {
    const functions = Object.values(service.findResources("AWS::Lambda::Function")).filter((fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME);
    expect(functions).toHaveLength(3);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables.POOLGATE_URL).toBeDefined();
      expect(fn.Properties.Environment.Variables.POOLGATE_AUDIENCE).toMatch(/^[A-Za-z0-9]+$/);
      expect(fn.Properties.VpcConfig).toBeDefined();
    }
    // Each caller's role is a principal of the gateway: the data callers read-write, the hook an operator.
    const task = Object.values(service.findResources("AWS::ECS::TaskDefinition"))[0];
    const config = JSON.stringify((task?.Properties.ContainerDefinitions as { Environment: unknown }[])[0]?.Environment);
    expect(config.match(/\\"clusters\\":\{\\"default\\":\\"read-write\\"\},\\"admin\\":false/g)).toHaveLength(2);
    // The failover hook and the operators' token: operator routes, no data.
    expect(config.match(/\\"clusters\\":\{\},\\"admin\\":true/g)).toHaveLength(2);
    const statements = Object.values(service.findResources("AWS::IAM::Policy")).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[],
    );
    const actions = statements.flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]));
    expect(actions.filter((action) => /^(rds-db|rds-data|rds):/.test(action))).toEqual([]);
    // The only secret reads belong to the gateway: its execution role (the peer key, an ECS secret) and
    // its task role (the database secret, read again after a rotation).
    const secretReaders = Object.values(service.findResources("AWS::IAM::Policy")).filter((policy) => JSON.stringify(policy.Properties.PolicyDocument).includes("secretsmanager:GetSecretValue"));
    expect(secretReaders.map((policy) => JSON.stringify(policy.Properties.Roles)).sort()).toEqual([expect.stringMatching(/TaskExecutionRole/), expect.stringMatching(/TaskTaskRole/)].sort());
    // Callers reach the load balancer on its listener port only.
    service.hasResourceProperties("AWS::EC2::SecurityGroupIngress", { IpProtocol: "tcp", FromPort: 80, ToPort: 80, Description: Match.stringLikeRegexp("Poolgate callers") });
  });
});

describe("cdk-nag", () => {
  it("runs on synth and fails it on an unacknowledged finding (negative control)", () => {
    const app = new App();
    const stack = new Stack(app, "Careless", { env: { region: "us-east-1" } });
    new s3.Bucket(stack, "Open");
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });
});

describe("the connection budget", () => {
  it.each(Object.entries(MAX_CONNECTIONS).flatMap(([engine, classes]) => Object.keys(classes).map((instanceClass) => [engine, instanceClass])))(
    "holds on %s db.%s at the default service size",
    (engine, instanceClass) => {
      const budget = poolBudget({ engine: engine as "postgres" | "mysql", instanceClass, maxTasks: 6, maxHealthyPercent: 200, reservedConnections: 20 });
      expect(budget.poolSize).toBeGreaterThanOrEqual(1);
      expect(budget.worstCase).toBeLessThanOrEqual(budget.limit);
      expect(budget.limit).toBeLessThan(budget.maxConnections);
    },
  );

  it("rejects a configuration that would exceed it, at synth, with a clear error", () => {
    expect(() => poolBudget({ engine: "mysql", instanceClass: "t4g.medium", maxTasks: 20, maxHealthyPercent: 200, reservedConnections: 20 })).toThrow(PoolBudgetError);
    expect(() => build({ engine: "postgres", instanceClass: "r6g.large", maxTasks: "10", poolSize: "100" })).toThrow(/connection budget exceeded on db\.r6g\.large .*largest pool that fits is \d+/);
    expect(() => build({ instanceClass: "m9.huge" })).toThrow(/unknown instance class db\.m9\.huge/);
    expect(() => build({ maxTasks: "lots" })).toThrow(/context maxTasks must be a whole number/);
    expect(() => build({ poolSize: "10.5" })).toThrow(/context poolSize must be a whole number/);
  });

  it("sizes the pool from the budget by default", () => {
    expect(built.service.gateway.budget).toMatchObject({ poolSize: 50, maxConnections: 1660 });
  });
});
