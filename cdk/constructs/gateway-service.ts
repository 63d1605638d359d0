/**
 * The gateway on ECS Fargate behind an internal Application Load Balancer, built from the repository's
 * Dockerfile. Chosen for fast, safe replacement and failovers:
 * - target-group health checks on /readyz every 5 s (2 failures out, 2 passes in): a dead task leaves
 *   in about 10 s; /readyz never depends on the database, so a failover does not make every task
 *   unhealthy at once and throw the warm pools away;
 * - deregistration delay (15 s) < the gateway's drain (20 s) < the container's stop timeout (30 s);
 * - CPU and request-count auto scaling between minTasks and maxTasks;
 * - the per-task pool size computed from the cluster's connection budget at the service's largest size
 *   during a deployment (synth fails with a clear error when it cannot fit);
 * - database credentials read by the task itself from the (rotated) secret, TLS to every instance
 *   verified against the RDS CA bundle in the image; cluster endpoint and topology discovery wired
 *   from the database construct;
 * - callers authenticated by their IAM roles (presigned sts:GetCallerIdentity): `grant` lists a
 *   function's role among the gateway's principals and gives it the URL, the audience and the
 *   network path.
 */
import {
  Duration,
  Lazy,
  Names,
  RemovalPolicy,
  Stack,
  aws_ec2 as ec2,
  aws_ecs as ecs,
  aws_elasticloadbalancingv2 as elbv2,
  aws_logs as logs,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
} from "aws-cdk-lib";
import type * as lambda from "aws-cdk-lib/aws-lambda";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import { Construct } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import { type PoolBudget, poolBudget } from "./pool-budget.js";

export interface PoolgateGatewayProps {
  vpc: ec2.IVpc;
  database: PoolgateDatabase;
  /** Directory holding the Dockerfile (the repository root). */
  imageDirectory: string;
  minTasks?: number;
  maxTasks?: number;
  cpu?: number;
  memoryMiB?: number;
  /** Per-task pool size per endpoint; default: the largest that fits the connection budget (at most 50). */
  poolSize?: number;
  /** Connections kept free on each instance for admin, migrations and monitoring (default 20). */
  reservedConnections?: number;
  /** ECS maximumPercent during deployments (default 200). */
  maxHealthyPercent?: number;
}

/** What a caller may do (see the README's security section). */
export interface GatewayGrant {
  /** Default "read-write". */
  access?: "read-only" | "read-write";
  /** The operator routes (/healthz, /v1/admin/...); default false. */
  admin?: boolean;
}

/** Where the image keeps the RDS certificate authorities (see the Dockerfile). */
const RDS_CA_BUNDLE = "/etc/ssl/certs/rds-global-bundle.pem";

/** The gateway's listener port on the load balancer. */
const LISTENER_PORT = 80;
const CONTAINER_PORT = 8080;

export class PoolgateGateway extends Construct {
  readonly service: ecs.FargateService;
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  readonly budget: PoolBudget;
  /** The gateway's URL inside the VPC. */
  readonly url: string;
  /** The cluster name in the gateway's configuration (a dimension of its pool metrics). */
  readonly clusterName = "default";
  /** What callers sign into their identity proofs: binds them to this gateway. */
  readonly audience: string;
  /** The operators' bearer token (principal "operator", admin only): `{"operator": "<token>"}`. */
  readonly operatorToken: secretsmanager.Secret;
  private readonly principals: Record<string, { clusters: Record<string, string>; admin: boolean }> = {};

  constructor(scope: Construct, id: string, props: PoolgateGatewayProps) {
    super(scope, id);
    const minTasks = props.minTasks ?? 2;
    const maxTasks = props.maxTasks ?? 6;
    const maxHealthyPercent = props.maxHealthyPercent ?? 200;
    const database = props.database;
    this.budget = poolBudget({
      engine: database.engine,
      instanceClass: database.instanceClass,
      maxTasks,
      maxHealthyPercent,
      reservedConnections: props.reservedConnections ?? 20,
      ...(props.poolSize === undefined ? {} : { poolSize: props.poolSize }),
    });

    const cluster = new ecs.Cluster(this, "Cluster", { vpc: props.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
    // The image is built for x86_64 whatever machine deploys it, and the task runs on x86_64.
    const taskDefinition = new ecs.FargateTaskDefinition(this, "Task", {
      cpu: props.cpu ?? 512,
      memoryLimitMiB: props.memoryMiB ?? 1024,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.X86_64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
    });
    const logGroup = new logs.LogGroup(this, "Logs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const peerKey = new secretsmanager.Secret(this, "PeerKey", {
      description: "Poolgate: the key the gateway's tasks share to forward transaction calls to each other",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    this.audience = Names.uniqueId(this).slice(-128);
    // Operators (the status page, Prometheus) use a generated bearer token: {"operator": "<token>"}.
    this.operatorToken = new secretsmanager.Secret(this, "OperatorToken", {
      description: "Poolgate: the bearer token of the gateway's operator routes (status page at /, /metrics, /v1/admin)",
      generateSecretString: { secretStringTemplate: "{}", generateStringKey: "operator", passwordLength: 40, excludePunctuation: true },
    });
    this.principals.operator = { clusters: {}, admin: true };
    const config = {
      clusters: {
        default: {
          writerUrl: database.writerUrl,
          discovery: { instanceHostPattern: database.instanceHostPattern, refreshIntervalMs: 30000 },
          credentials: { source: "secrets-manager", secretArn: database.secret.secretArn },
          tls: { mode: "verify-full", caFile: RDS_CA_BUNDLE },
        },
      },
      auth: {
        iam: { audience: this.audience, regions: [Stack.of(this).region] },
        bearer: { secretArn: this.operatorToken.secretArn },
        principals: this.principals,
      },
      pool: { maxSize: this.budget.poolSize, minIdle: Math.min(2, this.budget.poolSize) },
      server: { host: "0.0.0.0", port: CONTAINER_PORT, drainTimeoutMs: 20000, keepAliveTimeoutMs: 75000 },
      topology: { checkIntervalMs: 1000, checkTimeoutMs: 1000 },
      // Pool metrics into CloudWatch through the task's log stream (EMF): the pool-wait alarm reads them.
      metrics: { emf: { enabled: true, intervalMs: 60000, namespace: "Poolgate" } },
    };
    taskDefinition.addContainer("gateway", {
      image: ecs.ContainerImage.fromAsset(props.imageDirectory, { platform: Platform.LINUX_AMD64 }),
      portMappings: [{ containerPort: CONTAINER_PORT }],
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: "gateway", logGroup }),
      // Lazy: callers granted after this point are still among the principals.
      environment: { POOLGATE_CONFIG_JSON: Lazy.string({ produce: () => Stack.of(this).toJsonString(config) }), LOG_LEVEL: "info" },
      secrets: {
        // Shared by the tasks: a transaction id names its task, and any task forwards calls to it.
        POOLGATE_PEER_KEY: ecs.Secret.fromSecretsManager(peerKey),
      },
      stopTimeout: Duration.seconds(30),
    });
    // The task reads the database secret itself, again after a rotation (both staging labels).
    database.secret.grantRead(taskDefinition.taskRole);
    this.operatorToken.grantRead(taskDefinition.taskRole);

    this.service = new ecs.FargateService(this, "Service", {
      cluster,
      taskDefinition,
      desiredCount: minTasks,
      minHealthyPercent: 100,
      maxHealthyPercent,
      circuitBreaker: { rollback: true },
      healthCheckGracePeriod: Duration.seconds(30),
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      assignPublicIp: false,
    });
    // The rule lives in this (stateless) stack: the database stack must not depend on the service's.
    const [databaseGroup] = database.cluster.connections.securityGroups;
    const [serviceGroup] = this.service.connections.securityGroups;
    if (!databaseGroup || !serviceGroup) throw new Error("the cluster and the service need a security group each");
    new ec2.CfnSecurityGroupIngress(this, "DatabaseIngress", {
      groupId: databaseGroup.securityGroupId,
      sourceSecurityGroupId: serviceGroup.securityGroupId,
      ipProtocol: "tcp",
      fromPort: database.port,
      toPort: database.port,
      description: "Poolgate gateway tasks",
    });

    const accessLogs = new s3.Bucket(this, "AccessLogs", {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
      lifecycleRules: [{ expiration: Duration.days(30) }],
    });
    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, "LoadBalancer", {
      vpc: props.vpc,
      internetFacing: false,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      // Below the gateway's keep-alive (75 s), above the client's (60 s): no 502s from closed sockets.
      idleTimeout: Duration.seconds(65),
      dropInvalidHeaderFields: true,
    });
    this.loadBalancer.logAccessLogs(accessLogs, "alb");
    const listener = this.loadBalancer.addListener("Http", { port: LISTENER_PORT, protocol: elbv2.ApplicationProtocol.HTTP, open: false });
    this.targetGroup = listener.addTargets("Gateway", {
      port: CONTAINER_PORT,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targets: [this.service],
      loadBalancingAlgorithmType: elbv2.TargetGroupLoadBalancingAlgorithmType.LEAST_OUTSTANDING_REQUESTS,
      deregistrationDelay: Duration.seconds(15),
      // Interactive transactions live in one task: the client SDK sends the load balancer's cookie back,
      // so its calls reach that task directly; other callers' calls are forwarded there (peer key).
      stickinessCookieDuration: Duration.hours(1),
      healthCheck: {
        path: "/readyz",
        interval: Duration.seconds(5),
        timeout: Duration.seconds(2),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 2,
        healthyHttpCodes: "200",
      },
    });

    const scaling = this.service.autoScaleTaskCount({ minCapacity: minTasks, maxCapacity: maxTasks });
    scaling.scaleOnCpuUtilization("Cpu", { targetUtilizationPercent: 60, scaleOutCooldown: Duration.seconds(60), scaleInCooldown: Duration.seconds(300) });
    scaling.scaleOnRequestCount("Requests", {
      targetGroup: this.targetGroup,
      requestsPerTarget: 3000,
      scaleOutCooldown: Duration.seconds(60),
      scaleInCooldown: Duration.seconds(300),
    });

    this.url = `http://${this.loadBalancer.loadBalancerDnsName}`;
  }

  /**
   * Lets a caller (a Lambda function in the VPC) use the gateway: its role becomes a principal with
   * `grant`'s access, it may reach the load balancer, and it is told the URL and the audience to sign for.
   */
  grant(caller: lambda.Function, grant: GatewayGrant = {}): void {
    const role = caller.role;
    if (!role) throw new Error(`${caller.node.path} has no role to authenticate as`);
    this.principals[role.roleArn] = { clusters: grant.admin && grant.access === undefined ? {} : { [this.clusterName]: grant.access ?? "read-write" }, admin: grant.admin ?? false };
    this.loadBalancer.connections.allowFrom(caller, ec2.Port.tcp(LISTENER_PORT), `Poolgate callers: ${caller.node.path}`);
    caller.addEnvironment("POOLGATE_URL", this.url);
    caller.addEnvironment("POOLGATE_AUDIENCE", this.audience);
  }
}
