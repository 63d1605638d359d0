/**
 * `-c engine=dsql`: the stacks with an Aurora DSQL cluster instead of Aurora, synthesised in memory
 * (cdk-nag runs as on every synth). Checked: the DSQL cluster and nothing of Aurora's (no RDS
 * cluster, instances, secrets, security-group peer rule, RDS event rules or instance alarms); the
 * gateway's task role may only DbConnect to this cluster, DbConnectAdmin is the migrations'; the
 * gateway's configuration (accepted by its own parser) names the DSQL endpoint and IAM-token logins;
 * the network reaches the cluster through its PrivateLink connection endpoint, or the NAT path; the
 * DSQL migrations (one DDL per file, checked at synth); the connection budget against the cluster's
 * quota; and the teardown path.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../functions/migrate/migration-files.js";
import { dsqlMigrationProblem } from "../functions/migrate/sql-statements.js";
import { parseConfig } from "../gateway/config/load.js";
import { DSQL_MAX_CONNECTIONS, poolBudget } from "./constructs/pool-budget.js";
import type { PoolgateApp } from "./lib/app.js";
import { build, configJson, containerEnvironment, fillReferences, logicalIdOf, projectRoot, removeBuilds } from "./test-support.js";

let built: PoolgateApp;
let database: Template;
let service: Template;
const scratch: string[] = [];

beforeAll(() => {
  built = build({ engine: "dsql" });
  // Synthesises the whole app: cdk-nag runs as a validation plugin and throws on a finding.
  built.app.synth();
  database = Template.fromStack(built.database);
  service = Template.fromStack(built.service);
}, 180000);

afterAll(() => {
  removeBuilds();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The DSQL cluster is an L1 resource: its own logical id. */
const cfnId = (app: PoolgateApp) => app.database.resolve(app.database.dsql.cluster.logicalId) as string;
const clusterId = () => cfnId(built);
const clusterArn = () => ({ "Fn::GetAtt": [clusterId(), "ResourceArn"] });

type Statement = { Action: string | string[]; Resource: unknown };
const statements = (template: Template, roleMatch?: RegExp) =>
  Object.values(template.findResources("AWS::IAM::Policy"))
    .filter((policy) => roleMatch === undefined || roleMatch.test(JSON.stringify(policy.Properties.Roles)))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
const withAction = (found: Statement[], action: string) => found.filter((statement) => [statement.Action].flat().includes(action));

describe("the database stack with -c engine=dsql", () => {
  it("holds a deletion-protected Aurora DSQL cluster, retained on delete, and nothing of Aurora's", () => {
    database.resourceCountIs("AWS::DSQL::Cluster", 1);
    database.hasResource("AWS::DSQL::Cluster", { Properties: { DeletionProtectionEnabled: true }, DeletionPolicy: "Retain" });
    for (const type of ["AWS::RDS::DBCluster", "AWS::RDS::DBInstance", "AWS::RDS::DBSubnetGroup", "AWS::SecretsManager::RotationSchedule"]) {
      database.resourceCountIs(type, 0);
      service.resourceCountIs(type, 0);
    }
    // No database secrets at all (the service stack keeps only the peer key and the operator token).
    database.resourceCountIs("AWS::SecretsManager::Secret", 0);
    expect(() => built.database.database).toThrow(/deploys Aurora DSQL/);
    database.hasOutput("ClusterIdentifier", { Value: { "Fn::GetAtt": [clusterId(), "Identifier"] } });
  });

  it("lets the gateway's role DbConnect to this cluster only, and keeps DbConnectAdmin to the migration function", () => {
    const gatewayRole = logicalIdOf(built.database, built.database.dsql.gatewayRole);
    database.hasResourceProperties("AWS::IAM::Role", {
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: "ecs-tasks.amazonaws.com" } })] },
    });
    const gatewayStatements = statements(database, new RegExp(gatewayRole));
    expect(gatewayStatements).toEqual([{ Action: "dsql:DbConnect", Effect: "Allow", Resource: clusterArn() }]);
    const migrationsRole = logicalIdOf(built.database, built.database.migrations.function.role ?? built.database.migrations.function);
    expect(withAction(statements(database, new RegExp(migrationsRole)), "dsql:DbConnectAdmin")).toEqual([{ Action: "dsql:DbConnectAdmin", Effect: "Allow", Resource: clusterArn() }]);
    // Nobody else may connect as admin, and nothing asks for dsql:* or any cluster.
    expect(withAction([...statements(database), ...statements(service)], "dsql:DbConnectAdmin")).toHaveLength(1);
    const dsqlActions = [...statements(database), ...statements(service)].filter((statement) => [statement.Action].flat().some((action) => action.startsWith("dsql:")));
    for (const statement of dsqlActions) expect(statement.Resource).toEqual(clusterArn());
  });

  it("runs the DSQL migrations as admin on every deploy, after the cluster and its connection endpoint, mapping the gateway's roles to its IAM role", () => {
    const [, resource] = Object.entries(database.findResources("Custom::PoolgateSchemaMigrations"))[0] ?? [];
    expect(resource?.Properties).toMatchObject({
      Engine: "dsql",
      Port: "5432",
      Database: "postgres",
      Tls: "verify-full",
      Region: "us-east-1",
      GatewayRoleArn: { "Fn::GetAtt": [logicalIdOf(built.database, built.database.dsql.gatewayRole), "Arn"] },
      ReadWriteRole: "poolgate_rw",
      ReadOnlyRole: "poolgate_ro",
      RunId: "test-run",
    });
    expect(resource?.Properties).not.toHaveProperty("AdminSecretArn");
    const endpoint = built.database.dsql.connectionEndpoint;
    expect(endpoint).toBeDefined();
    if (endpoint) expect(resource?.DependsOn).toEqual(expect.arrayContaining([clusterId(), logicalIdOf(built.database, endpoint)]));
    // The DSQL set travels in the bundle, and every file is one DDL statement or DML only.
    const fn = database.findResources("AWS::Lambda::Function")[logicalIdOf(built.database, built.database.migrations.function)];
    const assetDir = join(built.app.outdir, `asset.${String(fn?.Properties.Code.S3Key).replace(/\.zip$/, "")}`);
    const shipped = loadMigrations(join(assetDir, "migrations/dsql"));
    expect(shipped.map((migration) => migration.version)).toEqual(loadMigrations(join(projectRoot, "functions/migrate/migrations/dsql")).map((migration) => migration.version));
    for (const migration of shipped) expect(dsqlMigrationProblem(migration.sql)).toBeUndefined();
  });

  it("refuses at synth a migration file that mixes DDL with other statements", () => {
    const dir = mkdtempSync(join(tmpdir(), "poolgate-dsql-migrations-"));
    scratch.push(dir);
    mkdirSync(join(dir, "dsql"));
    writeFileSync(join(dir, "dsql/0001_two_tables.sql"), "create table a (x int primary key);\ncreate table b (y int primary key);\n");
    expect(() => build({ engine: "dsql", migrationsDir: dir })).toThrow(/0001_two_tables\.sql: it has 2 statements, 2 of them DDL; Aurora DSQL runs one DDL statement per transaction/);
  });
});

describe("the network with -c engine=dsql", () => {
  it("reaches the cluster through its own PrivateLink connection endpoint in every zone, on 5432, in the default endpoints mode", () => {
    const endpoint = built.database.dsql.connectionEndpoint;
    if (!endpoint) throw new Error("the endpoints mode has the DSQL connection endpoint");
    const id = logicalIdOf(built.database, endpoint);
    const properties = database.findResources("AWS::EC2::VPCEndpoint")[id]?.Properties;
    expect(properties).toMatchObject({ VpcEndpointType: "Interface", PrivateDnsEnabled: true, ServiceName: { "Fn::GetAtt": [clusterId(), "VpcEndpointServiceName"] } });
    expect(properties.SubnetIds).toHaveLength(2);
    database.hasResourceProperties("AWS::EC2::SecurityGroup", {
      SecurityGroupIngress: [Match.objectLike({ IpProtocol: "tcp", FromPort: 5432, ToPort: 5432, CidrIp: Match.anyValue() })],
    });
    // The six AWS services, S3's gateway endpoint, and DSQL's.
    database.resourceCountIs("AWS::EC2::VPCEndpoint", 8);
  });

  it("uses the NAT path and the public endpoint with -c egress=nat-per-az", () => {
    const nat = build({ engine: "dsql", egress: "nat-per-az" });
    const template = Template.fromStack(nat.database);
    template.resourceCountIs("AWS::EC2::VPCEndpoint", 1);
    expect(nat.database.dsql.connectionEndpoint).toBeUndefined();
    template.hasResourceProperties("Custom::PoolgateSchemaMigrations", { Host: { "Fn::GetAtt": [cfnId(nat), "Endpoint"] } });
    expect(parseConfig(JSON.parse(fillReferences(Template.fromStack(nat.service))), "nat").clusters.default?.writerUrl).toBe("postgres://abcdefghijklmnopqrstuvwxyz.dsql-fnh4.us-east-1.on.aws:5432/postgres");
  }, 180000);
});

describe("the service stack with -c engine=dsql", () => {
  it("runs the gateway as the database stack's role, with IAM-token logins as poolgate_rw and poolgate_ro at the DSQL endpoint", () => {
    const task = Object.values(service.findResources("AWS::ECS::TaskDefinition"))[0];
    expect(JSON.stringify(task?.Properties.TaskRoleArn)).toContain(`PublishOutputFnGetAttDatabaseGatewayRole`);
    const raw = configJson(service);
    expect(raw).toContain(`"writerUrl":"postgres://REF:5432/postgres"`);
    expect(raw).toContain(`"credentials":{"source":"dsql","username":"poolgate_rw","region":"us-east-1"}`);
    expect(raw).toContain(`"logins":{"readOnly":{"source":"dsql","username":"poolgate_ro","region":"us-east-1"}}`);
    // The host: <identifier>.<the connection endpoint service's last label>.<region>.on.aws.
    const host = JSON.stringify(containerEnvironment(service).find((variable) => variable.Name === "POOLGATE_CONFIG_JSON")?.Value);
    expect(host).toMatch(/PublishOutputFnGetAttDatabaseCluster\w+Identifier.*"Fn::Select":\[3,\{"Fn::Split":\[".",\{"Fn::GetStackOutput":\{"StackName":"PoolgateDatabase","Region":"us-east-1","OutputName":"PublishOutputFnGetAttDatabaseCluster\w+VpcEndpointServiceName\w*"\}\}\]\}\]\},"us-east-1.on.aws"/);
    const config = parseConfig(JSON.parse(fillReferences(service)), "the stack's POOLGATE_CONFIG_JSON");
    const cluster = config.clusters.default;
    expect(cluster?.credentials).toEqual({ source: "dsql", username: "poolgate_rw", region: "us-east-1" });
    expect(cluster?.discovery).toBeUndefined();
    expect(cluster?.readerUrls).toEqual([]);
    // TLS: DSQL's own default (verify-full against Node's store), never the RDS bundle.
    expect(raw).not.toContain("rds-global-bundle");
    // The task reads no database secret: only the operator token.
    const secretReads = withAction(statements(service), "secretsmanager:GetSecretValue").map((statement) => JSON.stringify(statement.Resource));
    expect(secretReads.every((resource) => resource.includes("OperatorToken") || resource.includes("PeerKey"))).toBe(true);
  });

  it("adds no database security-group rule, no RDS event rules, no failover hook and no instance alarms, and keeps the canary and the gateway's alarms", () => {
    expect(JSON.stringify(service.findResources("AWS::EC2::SecurityGroupIngress"))).not.toContain("Poolgate gateway tasks");
    expect(service.findResources("AWS::Events::Rule", { Properties: { EventPattern: Match.anyValue() } })).toEqual({});
    expect(built.service.health.hook).toBeUndefined();
    expect(built.service.health.events).toBeUndefined();
    const alarms = Object.values(service.findResources("AWS::CloudWatch::Alarm")).map((alarm) => alarm.Properties);
    expect(alarms.filter((alarm) => alarm.Namespace === "AWS/RDS")).toEqual([]);
    // PoolAcquireWaitP99 twice: the PoolWaitTime alarm and the pool-wait scale-out's own alarm.
    expect(alarms.map((alarm) => alarm.MetricName).sort()).toEqual(["CanarySuccess", "Errors", "HealthyHostCount", "PoolAcquireWaitP99", "PoolAcquireWaitP99", "TargetResponseTime", "UnHealthyHostCount", undefined].sort());
    const canary = Object.values(service.findResources("AWS::Lambda::Function")).find((fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === "poolgate-canary");
    expect(canary?.Properties.Environment.Variables.POOLGATE_ENGINE).toBe("postgres");
    service.resourceCountIs("AWS::ApiGatewayV2::Api", 0);
  });
});

describe("the connection budget with -c engine=dsql", () => {
  it("is measured against the cluster's connection quota, one endpoint per task", () => {
    expect(built.service.gateway.budget).toMatchObject({ poolSize: 50, maxConnections: DSQL_MAX_CONNECTIONS, ceiling: 8000 });
    // 6 tasks × 200% during a deployment × 1 endpoint × (2 logins × 50 + 1 monitor).
    expect(built.service.gateway.budget.worstCase).toBe(12 * (2 * 50 + 1));
    expect(() => poolBudget({ engine: "dsql", maxTasks: 100, maxHealthyPercent: 200, reservedConnections: 20, logins: 2, poolSize: 50 })).toThrow(
      /connection budget exceeded on the Aurora DSQL cluster \(connection quota 10000\): 100 tasks × 200% during deployments × 1 × \(2 logins × pool 50 \+ 1 monitor\) = 20200 connections.*ask AWS for a higher connection quota \(the largest pool that fits is 19\)/,
    );
    expect(() => build({ engine: "dsql", instanceClass: "r6g.large" })).toThrow(/context instanceClass applies to Aurora only/);
    expect(() => build({ engine: "oracle" })).toThrow(/context engine must be "postgres", "mysql" or "dsql"/);
  });
});

describe("the teardown path with -c engine=dsql -c deletionProtection=false", () => {
  it("synthesises with cdk-nag, with protection off and the cluster deleted with the stack", () => {
    const teardown = build({ engine: "dsql", deletionProtection: "false" });
    expect(() => teardown.app.synth()).not.toThrow();
    Template.fromStack(teardown.database).hasResource("AWS::DSQL::Cluster", { Properties: { DeletionProtectionEnabled: false }, DeletionPolicy: "Delete" });
  }, 180000);
});
