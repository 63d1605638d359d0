/**
 * The CDK app, synthesised in memory (offline: no credentials, no Docker, no lookups) and checked for
 * invariants rather than snapshots: no public database, encrypted storage, the gateway's own logins,
 * migrations ordered between the database and the service, health checks tuned for fast replacement,
 * tasks that reach each other, no fixed task count, callers with only the access they need, the
 * configuration the gateway's own parser accepts, the connection budget, and cdk-nag's AwsSolutions
 * rules (a finding fails synth) — also on the documented teardown path.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App, Stack, Validations, aws_s3 as s3 } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../gateway/config/load.js";
import { loadGrantScript } from "../functions/migrate/grant-script.js";
import { checksumOf, loadMigrations } from "../functions/migrate/migration-files.js";
import { MAX_CONNECTIONS, poolBudget, PoolBudgetError } from "./constructs/pool-budget.js";
import type { PoolgateApp } from "./lib/app.js";
import { build, configJson, containerEnvironment, fillReferences, logicalIdOf, projectRoot, removeBuilds } from "./test-support.js";

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

afterAll(removeBuilds);

/** The stack's POOLGATE_CONFIG_JSON with plausible values for CloudFormation's references, parsed by the gateway. */
function parseStackConfig(template: Template) {
  const raw = JSON.parse(fillReferences(template)) as { clusters: Record<string, Record<string, unknown>> };
  return parseConfig(raw, "the stack's POOLGATE_CONFIG_JSON");
}

describe("the database stack", () => {
  it("keeps the database private, encrypted, backed up, IAM-authenticated and deletion-protected", () => {
    database.hasResource("AWS::RDS::DBCluster", {
      Properties: Match.objectLike({ Engine: "aurora-postgresql", StorageEncrypted: true, EnableIAMDatabaseAuthentication: true, DeletionProtection: true, BackupRetentionPeriod: 7 }),
      DeletionPolicy: "Retain",
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
    database.hasResourceProperties("AWS::EC2::FlowLog", { TrafficType: "ALL" });
  });

  it("gives the gateway a read-write and a read-only login of its own, each with a rotated secret in the RDS format", () => {
    // The master secret and the two logins' secrets, each rotated (single user: the login changes its own password).
    database.resourceCountIs("AWS::SecretsManager::Secret", 3);
    database.resourceCountIs("AWS::SecretsManager::RotationSchedule", 3);
    for (const username of ["poolgate_rw", "poolgate_ro"]) {
      database.hasResourceProperties("AWS::SecretsManager::Secret", {
        GenerateSecretString: Match.objectLike({ SecretStringTemplate: JSON.stringify({ username, dbname: "poolgate" }), GenerateStringKey: "password" }),
      });
    }
    // Attached to the cluster: host, port and engine for the rotation function.
    database.resourceCountIs("AWS::SecretsManager::SecretTargetAttachment", 3);
  });

  it("runs the versioned migrations of its engine on every deploy, after the cluster and every instance, before the logins' rotations", () => {
    const migrations = loadMigrations(join(projectRoot, "functions/migrate/migrations/postgres"));
    expect(migrations.map((migration) => migration.version)).toContain("0001");
    const [id, resource] = Object.entries(database.findResources("Custom::PoolgateSchemaMigrations"))[0] ?? [];
    expect(resource?.Properties).toMatchObject({
      Engine: "postgres",
      Port: "5432",
      Database: "poolgate",
      Tls: "verify-full",
      AdminSecretArn: { Ref: logicalIdOf(built.database, built.database.database.secret) },
      ReadWriteSecretArn: { Ref: logicalIdOf(built.database, built.database.logins.readWrite.secret) },
      ReadOnlySecretArn: { Ref: logicalIdOf(built.database, built.database.logins.readOnly.secret) },
      MigrationsChecksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      // A value per synth (here fixed by -c migrationRunId): CloudFormation sends an update on every deploy.
      RunId: "test-run",
    });
    expect(checksumOf(migrations)).toMatch(/^[0-9a-f]{64}$/);
    const dependsOn = resource?.DependsOn as string[];
    for (const dbResource of Object.keys({ ...database.findResources("AWS::RDS::DBCluster"), ...database.findResources("AWS::RDS::DBInstance") })) expect(dependsOn).toContain(dbResource);
    // Every rotation (the logins' first run must find them; the master's must not race the run) waits for it.
    for (const schedule of Object.values(database.findResources("AWS::SecretsManager::RotationSchedule"))) expect(schedule.DependsOn).toContain(id);
    // The service stack (the gateway, the canary, the example functions) deploys after this stack.
    expect(built.service.dependencies).toContain(built.database);
  });

  it("runs the migrations as the master user from inside the VPC, over verified TLS, with the SQL files in the bundle", () => {
    const fnId = logicalIdOf(built.database, built.database.migrations.function);
    database.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ NODE_EXTRA_CA_CERTS: "/var/runtime/ca-cert.pem" }) },
      VpcConfig: Match.objectLike({ SubnetIds: Match.anyValue() }),
      ReservedConcurrentExecutions: 1,
      Runtime: "nodejs24.x",
    });
    const fn = database.findResources("AWS::Lambda::Function")[fnId];
    const assetDir = join(built.app.outdir, `asset.${String(fn?.Properties.Code.S3Key).replace(/\.zip$/, "")}`);
    expect(loadMigrations(join(assetDir, "migrations/postgres")).map((m) => m.version)).toEqual(loadMigrations(join(projectRoot, "functions/migrate/migrations/postgres")).map((m) => m.version));
    // And the README's grant scripts, which every run applies after the migrations.
    for (const engine of ["postgres", "mysql"] as const) expect(loadGrantScript(join(assetDir, "grants"), engine)).toBe(loadGrantScript(join(projectRoot, "schemas/grants"), engine));
    // The cluster admits the function on its port; the function reads the master and both login secrets.
    const functionGroup = (fn?.Properties.VpcConfig.SecurityGroupIds as { "Fn::GetAtt": [string, string] }[])[0]?.["Fn::GetAtt"][0];
    const clusterGroup = database.findResources("AWS::EC2::SecurityGroup", { Properties: { GroupDescription: Match.stringLikeRegexp("RDS security group") } });
    const ingress = Object.values(clusterGroup).flatMap((group) => (group.Properties.SecurityGroupIngress ?? []) as { SourceSecurityGroupId?: { "Fn::GetAtt": string[] }; FromPort: unknown }[]);
    const ingressRules = [...ingress, ...Object.values(database.findResources("AWS::EC2::SecurityGroupIngress")).map((rule) => rule.Properties)];
    expect(ingressRules.some((rule) => rule.SourceSecurityGroupId?.["Fn::GetAtt"]?.[0] === functionGroup && (rule.FromPort === 5432 || rule.FromPort === "5432" || (rule.FromPort as { "Fn::GetAtt"?: unknown })?.["Fn::GetAtt"] !== undefined))).toBe(true);
    const role = (fn?.Properties.Role as { "Fn::GetAtt": string[] })["Fn::GetAtt"][0];
    const readSecrets = Object.values(database.findResources("AWS::IAM::Policy"))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(String(role)))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
      .filter((statement) => [statement.Action].flat().includes("secretsmanager:GetSecretValue"))
      .map((statement) => JSON.stringify(statement.Resource));
    for (const secret of [built.database.database.secret, built.database.logins.readWrite.secret, built.database.logins.readOnly.secret]) {
      expect(readSecrets.some((resource) => resource.includes(logicalIdOf(built.database, secret)))).toBe(true);
    }
  });

  it("selects MySQL on request, with the canary writing MySQL's SQL and without the PostgreSQL example API", () => {
    const mysql = build({ engine: "mysql" });
    mysql.app.synth();
    Template.fromStack(mysql.database).hasResourceProperties("AWS::RDS::DBCluster", { Engine: "aurora-mysql", Port: 3306 });
    Template.fromStack(mysql.database).hasResourceProperties("Custom::PoolgateSchemaMigrations", { Engine: "mysql", Port: "3306" });
    const functions = Object.values(Template.fromStack(mysql.service).findResources("AWS::Lambda::Function")).map((fn) => fn.Properties.Environment?.Variables ?? {});
    expect(functions.find((variables) => variables.POWERTOOLS_SERVICE_NAME === "poolgate-canary")?.POOLGATE_ENGINE).toBe("mysql");
    expect(functions.some((variables) => variables.POWERTOOLS_SERVICE_NAME === "notes-api")).toBe(false);
    Template.fromStack(mysql.service).resourceCountIs("AWS::ApiGatewayV2::Api", 0);
  }, 180000);
});

describe("the teardown path (-c deletionProtection=false)", () => {
  it("synthesises with cdk-nag: RDS10 is acknowledged there and only there, and the cluster is snapshotted on delete", () => {
    const teardown = build({ deletionProtection: "false" });
    expect(() => teardown.app.synth()).not.toThrow();
    Template.fromStack(teardown.database).hasResource("AWS::RDS::DBCluster", { Properties: Match.objectLike({ DeletionProtection: false }), DeletionPolicy: "Snapshot" });
    const acknowledged = (app: PoolgateApp) =>
      app.database.database.cluster.node.metadata.filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).map((entry) => JSON.stringify(entry.data));
    expect(acknowledged(teardown).join()).toContain("AwsSolutions-RDS10");
    expect(acknowledged(built).join()).not.toContain("AwsSolutions-RDS10");
    expect(() => build({ deletionProtection: "no" })).toThrow(/context deletionProtection must be true or false/);
  }, 180000);
});

describe("the service stack", () => {
  it("health-checks /readyz fast, drains within the stop timeout, and leaves the task count to auto scaling", () => {
    service.hasResourceProperties("AWS::ElasticLoadBalancingV2::LoadBalancer", { Scheme: "internal" });
    service.hasResourceProperties("AWS::ElasticLoadBalancingV2::TargetGroup", {
      HealthCheckPath: "/readyz",
      HealthCheckIntervalSeconds: 5,
      HealthCheckTimeoutSeconds: 2,
      HealthyThresholdCount: 2,
      UnhealthyThresholdCount: 2,
      TargetGroupAttributes: Match.arrayWith([
        { Key: "deregistration_delay.timeout_seconds", Value: "15" },
        { Key: "load_balancing.algorithm.type", Value: "least_outstanding_requests" },
      ]),
    });
    service.hasResourceProperties("AWS::ECS::Service", {
      // No DesiredCount: a CloudFormation update (a new image) never resets a scaled-out fleet.
      DesiredCount: Match.absent(),
      HealthCheckGracePeriodSeconds: Match.anyValue(),
      DeploymentConfiguration: Match.objectLike({ MaximumPercent: 200, MinimumHealthyPercent: 100, DeploymentCircuitBreaker: { Enable: true, Rollback: true } }),
    });
    service.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", { MinCapacity: 2, MaxCapacity: 6, ScalableDimension: "ecs:service:DesiredCount" });
    service.resourceCountIs("AWS::ApplicationAutoScaling::ScalingPolicy", 2);
    const container = (Object.values(service.findResources("AWS::ECS::TaskDefinition"))[0]?.Properties.ContainerDefinitions as Record<string, unknown>[])[0];
    expect(container?.StopTimeout).toBe(30);
    expect((container?.Secrets as { Name: string }[]).map((secret) => secret.Name)).toEqual(["POOLGATE_PEER_KEY"]);
  });

  it("lets the gateway's tasks reach each other on the container port (transaction forwarding)", () => {
    const serviceGroups = (Object.values(service.findResources("AWS::ECS::Service"))[0]?.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups as { "Fn::GetAtt": [string, string] }[]).map(
      (ref) => ref["Fn::GetAtt"][0],
    );
    expect(serviceGroups).toHaveLength(1);
    const self = { "Fn::GetAtt": [serviceGroups[0], "GroupId"] };
    service.hasResourceProperties("AWS::EC2::SecurityGroupIngress", { IpProtocol: "tcp", FromPort: 8080, ToPort: 8080, GroupId: self, SourceSecurityGroupId: self });
  });

  it("logs the gateway in as its own read-write login, never the master user, and reads only its logins' secrets", () => {
    const config = configJson(service);
    expect(config).toContain(`"credentials":{"source":"secrets-manager","secretArn":"`);
    const environment = JSON.stringify(containerEnvironment(service));
    const rwExport = `PublishOutputRef${logicalIdOf(built.database, built.database.logins.readWrite.secret)}`;
    const masterExport = `PublishOutputRef${logicalIdOf(built.database, built.database.database.secret)}`;
    expect(environment).toContain(rwExport);
    expect(environment).not.toContain(masterExport);
    const secretReads = Object.values(service.findResources("AWS::IAM::Policy"))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
      .filter((statement) => [statement.Action].flat().includes("secretsmanager:GetSecretValue"))
      .map((statement) => JSON.stringify(statement.Resource));
    expect(secretReads.some((resource) => resource.includes(rwExport))).toBe(true);
    expect(secretReads.some((resource) => resource.includes(masterExport))).toBe(false);
    // Read-only principals log in as the read-only login by default.
    expect(config).toMatch(/"logins":\{"readOnly":\{"source":"secrets-manager","secretArn":"/);
    expect(parseStackConfig(service).clusters.default?.logins?.readOnly).toMatchObject({ source: "secrets-manager" });
  });

  it("leaves the read-only login out of the configuration with -c readOnlyLogin=false, and counts every login's pools in the budget", () => {
    const withoutLogin = build({ readOnlyLogin: "false" });
    const template = Template.fromStack(withoutLogin.service);
    expect(configJson(template)).not.toContain(`"logins"`);
    expect(parseStackConfig(template).clusters.default?.logins).toBeUndefined();
    const withLogin = built;
    const roExport = `PublishOutputRef${logicalIdOf(withLogin.database, withLogin.database.logins.readOnly.secret)}`;
    expect(JSON.stringify(containerEnvironment(service))).toContain(roExport);
    // Two logins' pools share the same budget: each pool is smaller than with one login.
    expect(withLogin.service.gateway.budget.poolSize).toBeLessThan(withoutLogin.service.gateway.budget.poolSize);
    expect(withLogin.service.gateway.budget.worstCase).toBeLessThanOrEqual(withLogin.service.gateway.budget.limit);
  }, 180000);
});

describe("the gateway's configuration", () => {
  it("is accepted by the gateway's own parser once CloudFormation fills in the references", () => {
    const config = parseStackConfig(service);
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.auth.iam?.regions).toEqual(["us-east-1"]);
    expect(config.clusters.default?.credentials).toMatchObject({ source: "secrets-manager", secretArn: expect.stringMatching(/^arn:aws:secretsmanager:/) });
    expect(config.clusters.default?.tls).toEqual({ mode: "verify-full", caFile: "/etc/ssl/certs/rds-global-bundle.pem" });
    expect(config.metrics.emf.enabled).toBe(true);
    // The three functions' roles, and the operators' bearer token (read from its secret).
    expect(Object.keys(config.auth.principals)).toHaveLength(4);
    expect(config.auth.principals.operator).toMatchObject({ admin: true, clusters: {} });
    // Each function is held to its reserved concurrency in flight and its own timeout per statement.
    const limits = Object.entries(config.auth.principals).filter(([name]) => name !== "operator").map(([, grants]) => [grants.maxInFlight, grants.maxTimeoutMs]);
    expect(limits.sort()).toEqual([[1, 20000], [2, 10000], [50, 10000]].sort());
  });

  it("makes IAM roles principals with -c grantRoles, and admits caller networks with -c callerCidrs", () => {
    const granted = build({
      grantRoles: JSON.stringify({ "arn:aws:iam::123456789012:role/ci-pipeline": "read-write", "arn:aws:iam::123456789012:role/oncall": "admin", "arn:aws:iam::123456789012:role/reporting": "read-only" }),
      callerCidrs: "10.20.0.0/16",
    });
    const template = Template.fromStack(granted.service);
    const principals = JSON.parse(configJson(template)).auth.principals as Record<string, unknown>;
    expect(principals["arn:aws:iam::123456789012:role/ci-pipeline"]).toEqual({ clusters: { default: "read-write" }, admin: false });
    expect(principals["arn:aws:iam::123456789012:role/oncall"]).toEqual({ clusters: {}, admin: true });
    expect(principals["arn:aws:iam::123456789012:role/reporting"]).toEqual({ clusters: { default: "read-only" }, admin: false });
    expect(Object.keys(parseStackConfig(template).auth.principals)).toHaveLength(7);
    template.hasResourceProperties("AWS::EC2::SecurityGroup", {
      SecurityGroupIngress: Match.arrayWith([Match.objectLike({ CidrIp: "10.20.0.0/16", FromPort: 80, ToPort: 80 })]),
    });
    expect(() => build({ grantRoles: JSON.stringify({ "arn:aws:iam::123456789012:user/bob": "admin" }) })).toThrow(/context grantRoles: .*must be an IAM role ARN/);
    expect(() => build({ grantRoles: "not json" })).toThrow(/context grantRoles must be JSON/);
    template.hasResourceProperties("AWS::Lambda::Function", { ReservedConcurrentExecutions: 50, Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: "notes-api" }) } });
    Template.fromStack(build({ notesApiConcurrency: "5" }).service).hasResourceProperties("AWS::Lambda::Function", {
      ReservedConcurrentExecutions: 5,
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: "notes-api" }) },
    });
  }, 180000);
});

describe("the Lambda callers", () => {
  it("have reserved concurrency, timeouts below the load balancer's, the gateway's URL, audience and network path, and no database or secret access", () => {
    const functions = Object.values(service.findResources("AWS::Lambda::Function")).filter((fn) => fn.Properties.Environment?.Variables?.POOLGATE_URL);
    expect(functions).toHaveLength(3);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables.POOLGATE_AUDIENCE).toMatch(/^[A-Za-z0-9]+$/);
      expect(fn.Properties.VpcConfig).toBeDefined();
      expect(fn.Properties.ReservedConcurrentExecutions).toBeGreaterThanOrEqual(1);
      expect(fn.Properties.Timeout).toBeLessThan(65);
    }
    const statements = Object.values(service.findResources("AWS::IAM::Policy")).flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[]);
    const actions = statements.flatMap((statement) => [statement.Action].flat());
    expect(actions.filter((action) => /^(rds-db|rds-data|rds):/.test(action))).toEqual([]);
    const secretReaders = Object.values(service.findResources("AWS::IAM::Policy")).filter((policy) => JSON.stringify(policy.Properties.PolicyDocument).includes("secretsmanager:GetSecretValue"));
    expect(secretReaders.map((policy) => JSON.stringify(policy.Properties.Roles)).sort()).toEqual([expect.stringMatching(/TaskExecutionRole/), expect.stringMatching(/TaskTaskRole/)].sort());
    service.hasResourceProperties("AWS::EC2::SecurityGroupIngress", { IpProtocol: "tcp", FromPort: 80, ToPort: 80, Description: Match.stringLikeRegexp("Poolgate callers") });
  });

  it("refuses a caller whose timeout the load balancer would cut, or without a reserved concurrency", async () => {
    const { aws_lambda: lambda, Duration } = await import("aws-cdk-lib");
    const app = build();
    const make = (id: string, props: Partial<import("aws-cdk-lib").aws_lambda.FunctionProps>) =>
      new lambda.Function(app.service, id, { runtime: lambda.Runtime.NODEJS_24_X, handler: "index.handler", code: lambda.Code.fromInline("exports.handler=()=>1"), ...props });
    expect(() => app.service.gateway.grantFunction(make("Slow", { timeout: Duration.seconds(70), reservedConcurrentExecutions: 5 }))).toThrow(/below the load balancer's idle timeout \(65 s\)/);
    expect(() => app.service.gateway.grantFunction(make("Unbounded", { timeout: Duration.seconds(10) }))).toThrow(/has no reserved concurrency/);
  }, 180000);

  it("let the hook and the canary list the gateway's tasks and reach each of them on the container port", () => {
    const listers = Object.values(service.findResources("AWS::Lambda::Function")).filter((fn) => fn.Properties.Environment?.Variables?.POOLGATE_ECS_SERVICE);
    expect(listers.map((fn) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual(["poolgate-canary", "poolgate-failover-hook"]);
    for (const fn of listers) expect(fn.Properties.Environment.Variables).toMatchObject({ POOLGATE_TASK_PORT: "8080", POOLGATE_ECS_CLUSTER: expect.anything() });
    const ecsStatements = Object.values(service.findResources("AWS::IAM::Policy")).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Condition?: unknown }[]).filter((statement) => [statement.Action].flat().some((action) => action.startsWith("ecs:"))),
    );
    expect(ecsStatements.map((statement) => statement.Action).sort()).toEqual(["ecs:DescribeTasks", "ecs:DescribeTasks", "ecs:ListTasks", "ecs:ListTasks"]);
    const gatewayCluster = { "Fn::GetAtt": [logicalIdOf(built.service, built.service.gateway.cluster), "Arn"] };
    for (const statement of ecsStatements) expect(statement.Condition).toEqual({ ArnEquals: { "ecs:cluster": gatewayCluster } });
    service.hasResourceProperties("AWS::EC2::SecurityGroupIngress", { FromPort: 8080, ToPort: 8080, Description: Match.stringLikeRegexp("Poolgate task access") });
  });

  it("put the notes API behind an HTTP API with IAM authorisation, access logs and throttling", () => {
    service.resourceCountIs("AWS::ApiGatewayV2::Api", 1);
    service.hasResourceProperties("AWS::ApiGatewayV2::Api", { ProtocolType: "HTTP" });
    const routes = Object.values(service.findResources("AWS::ApiGatewayV2::Route")).map((route) => route.Properties);
    expect(routes.map((route) => route.RouteKey).sort()).toEqual(["DELETE /notes/{id}", "GET /notes", "GET /notes/{id}", "POST /notes", "PUT /notes/{id}"]);
    for (const route of routes) expect(route.AuthorizationType).toBe("AWS_IAM");
    service.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
      DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: 200, ThrottlingBurstLimit: 100 }),
    });
  });
});

/**
 * End of life of each Node.js LTS line, from the release schedule
 * (https://github.com/nodejs/Release#release-schedule, read 2026-11-28; docs/operating.md).
 */
const NODE_LTS_END_OF_LIFE: Record<number, string> = { 20: "2026-04-30", 22: "2027-04-30", 24: "2028-04-30" };

describe("the runtimes", () => {
  it("runs a supported Node.js LTS: the image's line in every function of the stack's own, and no function on a line past its end of life", () => {
    const dockerMajor = Number(/^FROM\s+node:(\d+)-/m.exec(readFileSync(join(projectRoot, "Dockerfile"), "utf8"))?.[1]);
    expect(NODE_LTS_END_OF_LIFE[dockerMajor]).toBeDefined();
    expect(Date.parse(NODE_LTS_END_OF_LIFE[dockerMajor] ?? "")).toBeGreaterThan(Date.now());
    const own = [
      [built.database, built.database.migrations.function],
      [built.service, built.service.health.canary.function],
      ...(built.service.health.hook ? [[built.service, built.service.health.hook.function] as const] : []),
      ...(built.service.notesApi ? [[built.service, built.service.notesApi.handler.function] as const] : []),
    ] as const;
    expect(own.length).toBeGreaterThanOrEqual(3);
    for (const [stack, fn] of own) {
      const template = stack === built.database ? database : service;
      expect(template.findResources("AWS::Lambda::Function")[logicalIdOf(stack, fn)]?.Properties.Runtime).toBe(`nodejs${dockerMajor}.x`);
    }
    // The CDK's own helper functions (log retention, custom resources) too: each on a supported LTS line.
    for (const template of [database, service]) {
      for (const fn of Object.values(template.findResources("AWS::Lambda::Function"))) {
        const major = /^nodejs(\d+)\.x$/.exec(String(fn.Properties.Runtime))?.[1];
        if (major === undefined) continue;
        const endOfLife = NODE_LTS_END_OF_LIFE[Number(major)];
        expect(endOfLife, `nodejs${major}.x is not an LTS line in the table`).toBeDefined();
        expect(Date.parse(endOfLife ?? ""), `nodejs${major}.x reached its end of life on ${endOfLife}`).toBeGreaterThan(Date.now());
      }
    }
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
      expect(budget.limit).toBeLessThan(budget.ceiling);
      expect(budget.ceiling).toBeLessThan(budget.maxConnections);
    },
  );

  it("counts every login's pools", () => {
    const one = poolBudget({ engine: "postgres", instanceClass: "r6g.large", maxTasks: 6, maxHealthyPercent: 200, reservedConnections: 20 });
    const two = poolBudget({ engine: "postgres", instanceClass: "r6g.large", maxTasks: 6, maxHealthyPercent: 200, reservedConnections: 20, logins: 2 });
    expect(two.worstCase).toBe(12 * 2 * (2 * two.poolSize + 1));
    expect(two.poolSize).toBeLessThan(one.poolSize);
    expect(two.worstCase).toBeLessThanOrEqual(two.limit);
    expect(() => poolBudget({ engine: "mysql", instanceClass: "t4g.medium", maxTasks: 2, maxHealthyPercent: 200, reservedConnections: 20, logins: 2, poolSize: 5 })).toThrow(/2 logins × pool 5/);
  });

  it("rejects a configuration that would exceed it, at synth, with a clear error", () => {
    expect(() => poolBudget({ engine: "mysql", instanceClass: "t4g.medium", maxTasks: 20, maxHealthyPercent: 200, reservedConnections: 20 })).toThrow(PoolBudgetError);
    expect(() => build({ engine: "postgres", instanceClass: "r6g.large", maxTasks: "10", poolSize: "100" })).toThrow(/connection budget exceeded on db\.r6g\.large .*largest pool that fits is \d+/);
    expect(() => build({ instanceClass: "m9.huge" })).toThrow(/unknown instance class db\.m9\.huge/);
    expect(() => build({ maxTasks: "lots" })).toThrow(/context maxTasks must be a whole number/);
    expect(() => build({ poolSize: "10.5" })).toThrow(/context poolSize must be a whole number/);
  });

  it("sizes the pool from the budget by default", () => {
    // Two logins (read-write and read-only) share the budget: 26 connections per pool instead of 50.
    expect(built.service.gateway.budget).toMatchObject({ poolSize: 26, maxConnections: 1660, ceiling: 1328 });
  });
});
