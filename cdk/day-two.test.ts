/**
 * The stack on day two, from its templates (issue 35 §4, issue 34 §4): three zones when asked for
 * three; no stickiness; the RDS logs' retention; what a retained cluster keeps on `cdk destroy`; weak
 * cross-stack references; readiness apart from liveness with a grace period sized from the bounded
 * start-up; ECS health checks that tell the hook and the canary which tasks are ready; scaling on what
 * saturates a task; HTTPS on request; Graviton tasks; parameter groups of our own with TLS required;
 * engine versions in standard support. Two configurations, synthesised once each without bundling.
 */
import { Duration } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../gateway/config/load.js";
import { clusterEngine, daysOfStandardSupportLeft, ENGINE_VERSIONS, RETIREMENT_NOTICE_DAYS } from "./constructs/engine-versions.js";
import { ACQUIRE_TIMEOUT_MS, CHECK_TIMEOUT_MS } from "./constructs/gateway-config.js";
import { healthCheckGrace, readyWithin } from "./constructs/start-up.js";
import type { PoolgateApp } from "./lib/app.js";
import { buildTemplates, fillReferences, removeBuilds } from "./test-support.js";

const CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0f6b8a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const DOMAIN = "poolgate.internal.example.com";

/** Default: PostgreSQL, two zones, the cluster retained, plain HTTP. */
let main: PoolgateApp;
let database: Template;
let service: Template;
/** MySQL, three zones, the teardown path, HTTPS. */
let other: PoolgateApp;
let otherDatabase: Template;
let otherService: Template;

beforeAll(() => {
  main = buildTemplates();
  database = Template.fromStack(main.database);
  service = Template.fromStack(main.service);
  other = buildTemplates({ engine: "mysql", maxAzs: "3", deletionProtection: "false", certificateArn: CERTIFICATE, gatewayDomain: DOMAIN });
  otherDatabase = Template.fromStack(other.database);
  otherService = Template.fromStack(other.service);
}, 300000);

afterAll(removeBuilds);

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string }>;
const resources = (template: Template, type: string) => template.findResources(type) as Resources;

function subnetsOfType(template: Template, type: "Public" | "Private" | "Isolated"): Resources {
  return Object.fromEntries(
    Object.entries(resources(template, "AWS::EC2::Subnet")).filter(([, subnet]) =>
      (subnet.Properties.Tags as { Key: string; Value: string }[]).some((tag) => tag.Key === "aws-cdk:subnet-type" && tag.Value === type),
    ),
  );
}

describe("the network's zones", () => {
  it("spans three zones with -c maxAzs=3, picked by CloudFormation from the region's zones (no account lookup)", () => {
    for (const type of ["Public", "Private", "Isolated"] as const) {
      const zones = Object.values(subnetsOfType(otherDatabase, type)).map((subnet) => JSON.stringify(subnet.Properties.AvailabilityZone));
      expect(new Set(zones).size).toBe(3);
    }
    // The three zones are the first three of Fn::GetAZs in the stack's region.
    const zones = Object.values(subnetsOfType(otherDatabase, "Isolated")).map((subnet) => subnet.Properties.AvailabilityZone);
    expect(zones).toEqual(expect.arrayContaining([0, 1, 2].map((i) => ({ "Fn::Select": [i, { "Fn::GetAZs": "" }] }))));
    expect(Object.keys(subnetsOfType(database, "Isolated"))).toHaveLength(2);
  });
});

describe("the load balancer", () => {
  it("pins no client to a task: no stickiness cookie, least outstanding requests decide", () => {
    const [group] = Object.values(resources(service, "AWS::ElasticLoadBalancingV2::TargetGroup"));
    const attributes = group?.Properties.TargetGroupAttributes as { Key: string; Value: string }[];
    expect(attributes).toContainEqual({ Key: "load_balancing.algorithm.type", Value: "least_outstanding_requests" });
    expect(attributes.filter((attribute) => attribute.Key.startsWith("stickiness.") && attribute.Value === "true")).toEqual([]);
  });

  it("speaks HTTPS with the given certificate, under a name a private zone resolves to it, and callers are told that URL", () => {
    otherService.hasResourceProperties("AWS::ElasticLoadBalancingV2::Listener", {
      Port: 443,
      Protocol: "HTTPS",
      Certificates: [{ CertificateArn: CERTIFICATE }],
      SslPolicy: Match.stringLikeRegexp("^ELBSecurityPolicy-TLS13"),
    });
    otherService.resourcePropertiesCountIs("AWS::ElasticLoadBalancingV2::Listener", { Protocol: "HTTP" }, 0);
    otherService.hasResourceProperties("AWS::Route53::HostedZone", { Name: `${DOMAIN}.`, VPCs: Match.anyValue() });
    otherService.hasResourceProperties("AWS::Route53::RecordSet", { Name: `${DOMAIN}.`, Type: "A", AliasTarget: Match.anyValue() });
    const callers = Object.values(resources(otherService, "AWS::Lambda::Function")).map((fn) => (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.POOLGATE_URL);
    expect(callers.filter((url) => url !== undefined)).toEqual(expect.arrayContaining([`https://${DOMAIN}`]));
    expect(callers.filter((url) => url !== undefined).every((url) => url === `https://${DOMAIN}`)).toBe(true);
    otherService.hasResourceProperties("AWS::EC2::SecurityGroupIngress", { FromPort: 443, ToPort: 443, Description: Match.stringLikeRegexp("Poolgate callers") });
  });

  it("warns at synth when it speaks plain HTTP, and refuses half an HTTPS setting", () => {
    Annotations.fromStack(main.service).hasWarning("*", Match.stringLikeRegexp("plain HTTP"));
    expect(Annotations.fromStack(other.service).findWarning("*", Match.stringLikeRegexp("plain HTTP"))).toEqual([]);
    expect(() => buildTemplates({ certificateArn: CERTIFICATE })).toThrow(/certificateArn and gatewayDomain go together/);
    expect(() => buildTemplates({ certificateArn: "not-an-arn", gatewayDomain: DOMAIN })).toThrow(/must be an ACM certificate ARN/);
  });
});

describe("the database's logs", () => {
  it("keeps every exported engine log a month, on both engines", () => {
    const retention = (template: Template) =>
      Object.values(resources(template, "Custom::LogRetention")).map((resource) => [JSON.stringify(resource.Properties.LogGroupName), resource.Properties.RetentionInDays]);
    const postgres = retention(database);
    expect(postgres).toHaveLength(1);
    expect(postgres[0]?.[0]).toMatch(/\/aws\/rds\/cluster\/.*\/postgresql/);
    expect(postgres[0]?.[1]).toBe(30);
    const mysql = retention(otherDatabase);
    expect(mysql.map(([name]) => String(name).replace(/.*\//, "").replace(/"\]\]\}$/, ""))).toEqual(expect.arrayContaining(["error", "slowquery"]));
    for (const [, days] of mysql) expect(days).toBe(30);
  });
});

describe("cdk destroy with the retained cluster", () => {
  it("keeps what the cluster needs to be used again: its secrets, security group, subnet group, the VPC and the database subnets", () => {
    database.hasResource("AWS::RDS::DBCluster", { DeletionPolicy: "Retain" });
    const retained = (template: Template, type: string) => Object.values(resources(template, type)).filter((resource) => resource.DeletionPolicy === "Retain");
    // The master secret and the gateway's two logins.
    expect(retained(database, "AWS::SecretsManager::Secret")).toHaveLength(3);
    expect(retained(database, "AWS::RDS::DBSubnetGroup")).toHaveLength(1);
    const clusterGroups = Object.entries(resources(database, "AWS::EC2::SecurityGroup")).filter(([, group]) => String(group.Properties.GroupDescription).includes("RDS security group"));
    expect(clusterGroups.map(([, group]) => group.DeletionPolicy)).toEqual(["Retain"]);
    expect(retained(database, "AWS::EC2::VPC")).toHaveLength(1);
    const isolated = subnetsOfType(database, "Isolated");
    for (const subnet of Object.values(isolated)) expect(subnet.DeletionPolicy).toBe("Retain");
    // Their route tables and associations stay with them; nothing else of the network does.
    const associations = Object.values(resources(database, "AWS::EC2::SubnetRouteTableAssociation")).filter((association) => Object.keys(isolated).includes((association.Properties.SubnetId as { Ref: string }).Ref));
    expect(associations).toHaveLength(2);
    for (const association of associations) expect(association.DeletionPolicy).toBe("Retain");
    for (const subnet of [...Object.values(subnetsOfType(database, "Public")), ...Object.values(subnetsOfType(database, "Private"))]) expect(subnet.DeletionPolicy).toBeUndefined();
    for (const type of ["AWS::EC2::NatGateway", "AWS::EC2::InternetGateway", "AWS::EC2::VPCEndpoint", "AWS::EC2::FlowLog"]) expect(retained(database, type)).toEqual([]);
  });

  it("keeps nothing on the teardown path (-c deletionProtection=false): the cluster leaves a snapshot and the rest goes", () => {
    otherDatabase.hasResource("AWS::RDS::DBCluster", { DeletionPolicy: "Snapshot" });
    for (const type of ["AWS::SecretsManager::Secret", "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::RDS::DBSubnetGroup"]) {
      expect(Object.values(resources(otherDatabase, type)).filter((resource) => resource.DeletionPolicy === "Retain")).toEqual([]);
    }
  });
});

describe("the references between the stacks", () => {
  it("are weak: the database stack exports nothing and the service stack imports nothing, so a changed value deploys at once", () => {
    const outputs = (database.toJSON() as { Outputs?: Record<string, { Export?: unknown }> }).Outputs ?? {};
    expect(Object.values(outputs).filter((output) => output.Export !== undefined)).toEqual([]);
    expect(JSON.stringify(service.toJSON())).not.toContain("Fn::ImportValue");
    expect(JSON.stringify(service.toJSON())).toContain('"Fn::GetStackOutput"');
    expect(() => buildTemplates({ crossStackReferences: "strong" })).toThrow(/context crossStackReferences must be one of weak, both/);
  });
});

describe("start-up and readiness", () => {
  const bounds = { checkTimeoutMs: CHECK_TIMEOUT_MS, acquireTimeoutMs: ACQUIRE_TIMEOUT_MS, healthCheckInterval: Duration.seconds(5), healthyThresholdCount: 2 };

  it("gives a new task the grace of its bounded start-up: ready within the pools' warm-up bound, then two passing checks", () => {
    const grace = healthCheckGrace(bounds);
    service.hasResourceProperties("AWS::ECS::Service", { HealthCheckGracePeriodSeconds: grace.toSeconds() });
    // Longer than the start-up bound plus the load balancer's two checks, and no longer than a minute.
    expect(grace.toMilliseconds()).toBeGreaterThanOrEqual(readyWithin(bounds).toMilliseconds() + 2 * 5000);
    expect(grace.toSeconds()).toBeLessThanOrEqual(60);
    // The bounds are the ones the gateway is configured with.
    const config = parseConfig(JSON.parse(fillReferences(service)), "the stack's POOLGATE_CONFIG_JSON");
    expect(config.pool.acquireTimeoutMs).toBe(ACQUIRE_TIMEOUT_MS);
    expect(config.topology.checkTimeoutMs).toBe(CHECK_TIMEOUT_MS);
    service.hasResourceProperties("AWS::ElasticLoadBalancingV2::TargetGroup", { HealthCheckPath: "/readyz", HealthCheckIntervalSeconds: 5, HealthyThresholdCount: 2 });
  });

  it("has ECS check each task's /readyz from inside its container, so the hook and the canary can tell ready tasks", () => {
    const [task] = Object.values(resources(service, "AWS::ECS::TaskDefinition"));
    const [container] = task?.Properties.ContainerDefinitions as { HealthCheck?: { Command: string[]; StartPeriod: number; Interval: number; Retries: number } }[];
    expect(container?.HealthCheck?.Command.slice(0, 3)).toEqual(["CMD", "node", "-e"]);
    expect(container?.HealthCheck?.Command[3]).toContain("http://127.0.0.1:8080/readyz");
    const grace = healthCheckGrace(bounds);
    expect(container?.HealthCheck?.StartPeriod).toBe(grace.toSeconds());
  });
});

describe("auto scaling", () => {
  it("scales on what saturates a task — its CPU and its writer pool's wait — never on the request count", () => {
    const policies = Object.values(resources(service, "AWS::ApplicationAutoScaling::ScalingPolicy")).map((policy) => policy.Properties);
    expect(JSON.stringify(policies)).not.toContain("ALBRequestCountPerTarget");
    expect(policies).toContainEqual(
      expect.objectContaining({ PolicyType: "TargetTrackingScaling", TargetTrackingScalingPolicyConfiguration: expect.objectContaining({ PredefinedMetricSpecification: { PredefinedMetricType: "ECSServiceAverageCPUUtilization" }, TargetValue: 60 }) }),
    );
    const step = policies.find((policy) => policy.PolicyType === "StepScaling");
    expect(step).toBeDefined();
    const alarm = Object.values(resources(service, "AWS::CloudWatch::Alarm")).find((resource) => JSON.stringify(resource.Properties.AlarmActions ?? []).includes("PoolWaitUpper"));
    expect(alarm?.Properties).toMatchObject({ MetricName: "PoolAcquireWaitP99", Namespace: "Poolgate", Statistic: "Maximum", EvaluationPeriods: 3 });
  });
});

describe("the gateway's tasks", () => {
  it("run on Graviton (ARM64)", () => {
    service.hasResourceProperties("AWS::ECS::TaskDefinition", { RuntimePlatform: { CpuArchitecture: "ARM64", OperatingSystemFamily: "LINUX" } });
  });
});

describe("the cluster's parameter groups", () => {
  it("are the stack's own, cluster and instances, and the database requires TLS: rds.force_ssl on PostgreSQL, require_secure_transport on MySQL", () => {
    for (const [template, family, parameters] of [
      [database, "aurora-postgresql17", { "rds.force_ssl": "1" }],
      [otherDatabase, "aurora-mysql8.0", { require_secure_transport: "ON" }],
    ] as const) {
      const clusterGroups = resources(template, "AWS::RDS::DBClusterParameterGroup");
      expect(Object.values(clusterGroups).map((group) => [group.Properties.Family, group.Properties.Parameters])).toEqual([[family, parameters]]);
      template.hasResourceProperties("AWS::RDS::DBCluster", { DBClusterParameterGroupName: { Ref: Object.keys(clusterGroups)[0] } });
      const instanceGroups = resources(template, "AWS::RDS::DBParameterGroup");
      expect(Object.values(instanceGroups).map((group) => group.Properties.Family)).toEqual([family]);
      for (const instance of Object.values(resources(template, "AWS::RDS::DBInstance"))) expect(instance.Properties.DBParameterGroupName).toEqual({ Ref: Object.keys(instanceGroups)[0] });
    }
  });
});

describe("the engine versions", () => {
  it("deploy the pinned minors", () => {
    database.hasResourceProperties("AWS::RDS::DBCluster", { Engine: "aurora-postgresql", EngineVersion: ENGINE_VERSIONS.postgres.version });
    otherDatabase.hasResourceProperties("AWS::RDS::DBCluster", { Engine: "aurora-mysql", EngineVersion: ENGINE_VERSIONS.mysql.version });
  });

  it.each(Object.entries(ENGINE_VERSIONS))("pin a %s minor that stays in standard support for the notice period from today", (_engine, pinned) => {
    // Fails (and so does synth) once the pinned minor is within RETIREMENT_NOTICE_DAYS of its end of standard support.
    expect(daysOfStandardSupportLeft(pinned, new Date())).toBeGreaterThanOrEqual(RETIREMENT_NOTICE_DAYS);
    expect(pinned.source).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
  });

  it("refuse to synthesise a minor about to leave standard support", () => {
    const end = new Date(`${ENGINE_VERSIONS.postgres.endOfStandardSupport}T00:00:00Z`);
    const shortlyBefore = new Date(end.getTime() - 30 * 24 * 60 * 60 * 1000);
    expect(() => clusterEngine("postgres", shortlyBefore)).toThrow(/leaves standard support on .* pin a current minor/);
    expect(() => clusterEngine("mysql", new Date(`${ENGINE_VERSIONS.mysql.endOfStandardSupport}T12:00:00Z`))).toThrow(/leaves standard support/);
    expect(() => clusterEngine("postgres", new Date(end.getTime() - 365 * 24 * 60 * 60 * 1000))).not.toThrow();
  });
});
