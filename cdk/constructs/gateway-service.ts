/**
 * The gateway on ECS Fargate behind an internal Application Load Balancer, built from the repository's
 * Dockerfile. Chosen for fast, safe replacement and failovers:
 * - target-group health checks on /readyz every 5 s (2 failures out, 2 passes in): a dead task leaves
 *   in about 10 s; /readyz never depends on the database, so a failover does not make every task
 *   unhealthy at once and throw the warm pools away;
 * - deregistration delay (15 s) < the gateway's drain (20 s) < the container's stop timeout (30 s);
 * - CPU and request-count auto scaling between minTasks and maxTasks, and no fixed desired count: a
 *   deployment never resets a scaled-out fleet (the first deployment starts one task and auto scaling
 *   raises it to minTasks at once);
 * - the tasks reach each other on the container port (a transaction call that lands on another task is
 *   forwarded to the task that holds it, signed with the shared peer key);
 * - the per-task pool size computed from the cluster's connection budget at the service's largest size
 *   during a deployment (synth fails with a clear error when it cannot fit);
 * - the database's side — endpoint, logins, TLS, the task's access and network path — from the
 *   database target (database-target.ts): on Aurora the gateway's own logins (never the master user),
 *   read by the task itself from their rotated secrets, TLS against the RDS CA bundle, topology
 *   discovery; on Aurora DSQL IAM-token logins as the roles mapped to the task's role;
 * - callers authenticated by their IAM roles (presigned sts:GetCallerIdentity): `grantFunction` and
 *   `grantRole` list a role among the gateway's principals (see gateway-access.ts).
 */
import {
  Annotations,
  Duration,
  Lazy,
  Names,
  RemovalPolicy,
  Stack,
  aws_applicationautoscaling as appscaling,
  aws_cloudwatch as cloudwatch,
  aws_ec2 as ec2,
  aws_ecs as ecs,
  aws_elasticloadbalancingv2 as elbv2,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_route53 as route53,
  aws_route53_targets as route53targets,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
} from "aws-cdk-lib";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import { Construct } from "constructs";
import type { GatewayDatabase } from "./database-target.js";
import { ACQUIRE_TIMEOUT_MS, CHECK_TIMEOUT_MS, gatewayConfig, type PrincipalGrants } from "./gateway-config.js";
import { type PoolBudget, poolBudget } from "./pool-budget.js";
import { healthCheckGrace, type StartUpBounds } from "./start-up.js";
import { VALKEY_KEY_PREFIX, ValkeyResultCache } from "./valkey-result-cache.js";
import { addTraceCollector, COLLECTOR_TRACES_URL } from "./trace-collector.js";

export interface PoolgateGatewayProps {
  vpc: ec2.IVpc;
  /** The database and the gateway's own logins there (never the master user or DSQL's admin). */
  database: GatewayDatabase;
  /** Directory holding the Dockerfile (the repository root). */
  imageDirectory: string;
  minTasks?: number;
  maxTasks?: number;
  cpu?: number;
  memoryMiB?: number;
  /** Per-task pool size per endpoint; default: the largest that fits the connection budget (at most 50). */
  poolSize?: number;
  /** Connections kept free on each instance (DSQL: the cluster) for admin, migrations and monitoring (default 20). */
  reservedConnections?: number;
  /** ECS maximumPercent during deployments (default 200). */
  maxHealthyPercent?: number;
  /**
   * Puts the read-only login into the configuration (`clusters.default.logins.readOnly`), so read-only
   * principals' sessions log in as a user the database limits to reading (default true; false keeps
   * the one-login mode, whose limits docs/security-and-logins.md lists). The login itself always exists.
   */
  configureReadOnlyLogin?: boolean;
  /**
   * HTTPS on the load balancer (default: none, plain HTTP inside the VPC, with a synth warning): an
   * ACM certificate for `domainName` (a public one for a name in a domain you own, or one from ACM
   * Private CA whose root the callers trust), and a private hosted zone that resolves `domainName` to
   * the internal load balancer in the VPC. See docs/deploying.md.
   */
  https?: GatewayHttps;
  /**
   * Where the result cache lives (docs/cache.md): "memory", each task its own (default), or "valkey",
   * one ElastiCache Serverless for Valkey shared by every task, so a write on one task invalidates
   * what the others cached (valkey-result-cache.ts).
   */
  resultCache?: "memory" | "valkey";
  /**
   * One trace from the caller to the database in AWS X-Ray (docs/tracing.md): the gateway's tracing on,
   * exporting to an ADOT collector sidecar that sends to X-Ray (trace-collector.ts). Default false.
   */
  tracing?: boolean;
}

export interface GatewayHttps {
  certificateArn: string;
  domainName: string;
}

/** What a caller may do (see docs/security-and-logins.md). */
export interface GatewayGrant {
  /** Default "read-write" (none for an operator: `{ admin: true }` alone grants no data). */
  access?: "read-only" | "read-write";
  /** The operator routes (/healthz, /metrics, /v1/admin/...); default false. */
  admin?: boolean;
  /** Most requests in flight (the gateway's maxInFlight); functions: their reserved concurrency by default. */
  maxInFlight?: number;
}

/** The gateway's listener port on the load balancer (plain HTTP, or HTTPS), and the tasks' own port. */
export const LISTENER_PORT = 80;
export const HTTPS_LISTENER_PORT = 443;
export const CONTAINER_PORT = 8080;
/** The load balancer's idle timeout: every caller's timeout must stay below it. */
export const LOAD_BALANCER_IDLE_TIMEOUT = Duration.seconds(65);
/** The target group's health check of /readyz: every 5 s, 2 passes to join (and 2 failures to leave). */
const HEALTH_CHECK_INTERVAL = Duration.seconds(5);
const HEALTHY_THRESHOLD = 2;
const START_UP: StartUpBounds = {
  checkTimeoutMs: CHECK_TIMEOUT_MS,
  acquireTimeoutMs: ACQUIRE_TIMEOUT_MS,
  healthCheckInterval: HEALTH_CHECK_INTERVAL,
  healthyThresholdCount: HEALTHY_THRESHOLD,
};
/**
 * Scale-out when a task's writer pool makes requests wait: the p99 acquire wait (EMF, per task, the
 * worst task of the minute) above this, for 3 minutes. Below the PoolWaitTime alarm's 500 ms, so the
 * service grows before anyone is paged.
 */
export const POOL_WAIT_SCALE_OUT_MS = 200;

export class PoolgateGateway extends Construct {
  readonly service: ecs.FargateService;
  readonly cluster: ecs.Cluster;
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  readonly budget: PoolBudget;
  readonly minTasks: number;
  /** The gateway's URL inside the VPC. */
  readonly url: string;
  /** The load balancer's listener port (443 with HTTPS, else 80). */
  readonly listenerPort: number;
  /** The cluster name in the gateway's configuration (a dimension of its pool metrics). */
  readonly clusterName = "default";
  /** What callers sign into their identity proofs: binds them to this gateway. */
  readonly audience: string;
  /** The operators' bearer token (principal "operator", admin only): `{"operator": "<token>"}`. */
  readonly operatorToken: secretsmanager.Secret;
  /** The gateway's principals, filled by `grantFunction` and `grantRole` (read lazily into the config). */
  readonly principals: Record<string, PrincipalGrants> = {};
  /** The shared result cache, with `resultCache: "valkey"`. */
  readonly resultCache: ValkeyResultCache | undefined;

  constructor(scope: Construct, id: string, props: PoolgateGatewayProps) {
    super(scope, id);
    this.minTasks = props.minTasks ?? 2;
    const maxTasks = props.maxTasks ?? 6;
    const maxHealthyPercent = props.maxHealthyPercent ?? 200;
    const { database } = props;
    const configureReadOnlyLogin = props.configureReadOnlyLogin ?? true;
    this.budget = poolBudget({
      engine: database.engine,
      instanceClass: database.instanceClass,
      maxTasks,
      maxHealthyPercent,
      reservedConnections: props.reservedConnections ?? 20,
      logins: configureReadOnlyLogin ? 2 : 1,
      ...(props.poolSize === undefined ? {} : { poolSize: props.poolSize }),
    });

    this.cluster = new ecs.Cluster(this, "Cluster", { vpc: props.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
    // Graviton (ARM64): the same vCPU and memory cost about 20% less on Fargate than x86_64 (docs/
    // operating.md). The image is built for linux/arm64 whatever machine deploys it (on an x86 machine
    // Docker builds it under emulation: buildx with QEMU).
    const taskRole = database.gatewayTaskRole(this);
    const taskDefinition = new ecs.FargateTaskDefinition(this, "Task", {
      ...(taskRole === undefined ? {} : { taskRole }),
      cpu: props.cpu ?? 512,
      memoryLimitMiB: props.memoryMiB ?? 1024,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
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
    this.resultCache = props.resultCache === "valkey" ? new ValkeyResultCache(this, "ResultCache", { vpc: props.vpc }) : undefined;
    const config = gatewayConfig({
      clusterName: this.clusterName,
      cluster: database.clusterConfig({ readOnlyLogin: configureReadOnlyLogin }),
      audience: this.audience,
      region: Stack.of(this).region,
      operatorTokenSecretArn: this.operatorToken.secretArn,
      principals: this.principals,
      poolSize: this.budget.poolSize,
      port: CONTAINER_PORT,
      ...(this.resultCache ? { valkey: { url: this.resultCache.url, keyPrefix: VALKEY_KEY_PREFIX } } : {}),
      ...(props.tracing === true ? { tracesUrl: COLLECTOR_TRACES_URL } : {}),
    });
    const gatewayContainer = taskDefinition.addContainer("gateway", {
      image: ecs.ContainerImage.fromAsset(props.imageDirectory, { platform: Platform.LINUX_ARM64 }),
      portMappings: [{ containerPort: CONTAINER_PORT }],
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: "gateway", logGroup }),
      // Lazy: callers granted after this point are still among the principals.
      environment: { POOLGATE_CONFIG_JSON: Lazy.string({ produce: () => Stack.of(this).toJsonString(config) }), LOG_LEVEL: "info" },
      secrets: {
        // Shared by the tasks: a transaction id names its task, and any task forwards calls to it.
        POOLGATE_PEER_KEY: ecs.Secret.fromSecretsManager(peerKey),
        // The result cache's password, filled into cache.valkey.url by the gateway's config loader.
        ...(this.resultCache ? { POOLGATE_VALKEY_PASSWORD: ecs.Secret.fromSecretsManager(this.resultCache.password) } : {}),
      },
      stopTimeout: Duration.seconds(30),
      // ECS's own view of readiness: the task's /readyz, from inside the container (the image has Node,
      // not curl). DescribeTasks reports it as the task's healthStatus, which the failover hook and the
      // canary read to call only ready tasks (functions/shared/gateway-tasks.ts).
      healthCheck: {
        command: ["CMD", "node", "-e", `fetch("http://127.0.0.1:${CONTAINER_PORT}/readyz").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`],
        interval: Duration.seconds(10),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: healthCheckGrace(START_UP),
      },
    });
    if (props.tracing === true) addTraceCollector(taskDefinition, gatewayContainer, logGroup);
    this.operatorToken.grantRead(taskDefinition.taskRole);

    this.service = new ecs.FargateService(this, "Service", {
      cluster: this.cluster,
      taskDefinition,
      // No desiredCount: auto scaling owns the task count (see the module comment).
      minHealthyPercent: 100,
      maxHealthyPercent,
      circuitBreaker: { rollback: true },
      // Sized from the gateway's bounded start-up (start-up.ts): listening, then ready within the pools' warm-up bound.
      healthCheckGracePeriod: healthCheckGrace(START_UP),
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      assignPublicIp: false,
    });
    const [serviceGroup] = this.service.connections.securityGroups;
    if (!serviceGroup) throw new Error("the service needs a security group");
    // A task forwards transaction calls to the task that holds the transaction, on the container port.
    // (Ingress only: the group already allows all outbound traffic.)
    serviceGroup.addIngressRule(serviceGroup, ec2.Port.tcp(CONTAINER_PORT), "Poolgate tasks forward transaction calls to each other");
    this.resultCache?.admit(serviceGroup, "Poolgate tasks read and invalidate the shared result cache");
    database.admitGateway(this, { taskRole: taskDefinition.taskRole, securityGroup: serviceGroup }, { readOnlyLogin: configureReadOnlyLogin });

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
      idleTimeout: LOAD_BALANCER_IDLE_TIMEOUT,
      dropInvalidHeaderFields: true,
    });
    this.loadBalancer.logAccessLogs(accessLogs, "alb");
    this.listenerPort = props.https ? HTTPS_LISTENER_PORT : LISTENER_PORT;
    const listener = props.https
      ? this.loadBalancer.addListener("Https", {
          port: HTTPS_LISTENER_PORT,
          protocol: elbv2.ApplicationProtocol.HTTPS,
          certificates: [elbv2.ListenerCertificate.fromArn(props.https.certificateArn)],
          sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
          open: false,
        })
      : this.loadBalancer.addListener("Http", { port: LISTENER_PORT, protocol: elbv2.ApplicationProtocol.HTTP, open: false });
    this.targetGroup = listener.addTargets("Gateway", {
      port: CONTAINER_PORT,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targets: [this.service],
      loadBalancingAlgorithmType: elbv2.TargetGroupLoadBalancingAlgorithmType.LEAST_OUTSTANDING_REQUESTS,
      deregistrationDelay: Duration.seconds(15),
      // No stickiness: a cookie would pin every request of a client to one task (the client sends it on
      // every call, not only inside a transaction), bypassing least-outstanding-requests and leaving
      // tasks added by scale-out idle. A transaction's calls that land on another task are forwarded to
      // the task that holds it (its id names the task; the peer key signs the hop).
      healthCheck: {
        path: "/readyz",
        interval: HEALTH_CHECK_INTERVAL,
        timeout: Duration.seconds(2),
        healthyThresholdCount: HEALTHY_THRESHOLD,
        unhealthyThresholdCount: 2,
        healthyHttpCodes: "200",
      },
    });

    const scaling = this.service.autoScaleTaskCount({ minCapacity: this.minTasks, maxCapacity: maxTasks });
    // What saturates a task: its CPU (the event loop serialises, parses and routes every request), and
    // its writer pool when requests queue for a connection. Never the request count: requests differ by
    // orders of magnitude in cost, and a count threshold drives the service to its maximum under a load
    // of cheap requests (docs/operating.md).
    scaling.scaleOnCpuUtilization("Cpu", { targetUtilizationPercent: 60, scaleOutCooldown: Duration.seconds(60), scaleInCooldown: Duration.seconds(300) });
    scaling.scaleOnMetric("PoolWait", {
      metric: new cloudwatch.Metric({
        namespace: "Poolgate",
        metricName: "PoolAcquireWaitP99",
        dimensionsMap: { cluster: this.clusterName, endpoint: `${this.clusterName}/writer` },
        statistic: "Maximum",
        period: Duration.minutes(1),
      }),
      scalingSteps: [
        { upper: POOL_WAIT_SCALE_OUT_MS, change: 0 },
        { lower: POOL_WAIT_SCALE_OUT_MS, upper: 2 * POOL_WAIT_SCALE_OUT_MS, change: +1 },
        { lower: 2 * POOL_WAIT_SCALE_OUT_MS, change: +2 },
      ],
      adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      cooldown: Duration.seconds(60),
    });

    if (props.https) {
      // The certificate's name, resolved to the internal load balancer inside the VPC only.
      const zone = new route53.PrivateHostedZone(this, "Zone", { zoneName: props.https.domainName, vpc: props.vpc });
      new route53.ARecord(this, "Address", { zone, target: route53.RecordTarget.fromAlias(new route53targets.LoadBalancerTarget(this.loadBalancer)) });
      this.url = `https://${props.https.domainName}`;
    } else {
      Annotations.of(this).addWarningV2(
        "poolgate:plain-http",
        "The gateway's load balancer speaks plain HTTP: SQL, results and callers' identity proofs cross the VPC unencrypted. Pass -c certificateArn=... -c gatewayDomain=... for HTTPS (docs/deploying.md).",
      );
      this.url = `http://${this.loadBalancer.loadBalancerDnsName}`;
    }
  }
  /**
   * Makes an IAM role — an operator, a CI pipeline, a function outside this stack — a principal of
   * the gateway with `grant`'s access. The role still needs a network path to the internal load
   * balancer (`allowCallersFrom`).
   */
  grantRole(role: iam.IRole, grant: GatewayGrant = {}): void {
    this.principals[role.roleArn] = this.grantsOf(grant);
  }

  /**
   * Lets a Lambda function in the VPC use the gateway: its role becomes a principal with `grant`'s
   * access, limited to its reserved concurrency in flight and to its own timeout per statement; it may
   * reach the load balancer, and it is told the URL and the audience to sign for. Its timeout must be
   * below the load balancer's idle timeout, and it needs a reserved concurrency (or `grant.maxInFlight`).
   */
  grantFunction(caller: lambda.Function, grant: GatewayGrant = {}): void {
    const role = caller.role;
    if (!role) throw new Error(`${caller.node.path} has no role to authenticate as`);
    const timeout = caller.timeout ?? Duration.seconds(3);
    if (timeout.toSeconds() >= LOAD_BALANCER_IDLE_TIMEOUT.toSeconds()) {
      throw new Error(`${caller.node.path} times out after ${timeout.toSeconds()} s: a gateway caller's timeout must be below the load balancer's idle timeout (${LOAD_BALANCER_IDLE_TIMEOUT.toSeconds()} s)`);
    }
    const maxInFlight = grant.maxInFlight ?? (caller.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions;
    if (maxInFlight === undefined || maxInFlight < 1) {
      throw new Error(`${caller.node.path} has no reserved concurrency: give it one (it bounds the function's calls in flight at the gateway) or pass maxInFlight`);
    }
    this.principals[role.roleArn] = { ...this.grantsOf(grant), maxInFlight, maxTimeoutMs: timeout.toMilliseconds() };
    this.loadBalancer.connections.allowFrom(caller, ec2.Port.tcp(this.listenerPort), `Poolgate callers: ${caller.node.path}`);
    caller.addEnvironment("POOLGATE_URL", this.url);
    caller.addEnvironment("POOLGATE_AUDIENCE", this.audience);
  }

  /**
   * Lets a granted function reach every task directly, not only the one the load balancer picks: it
   * may list the service's running tasks (ECS) and connect to their container port. The failover hook
   * (a topology refresh on each task) and the canary (a check of each task) use it.
   */
  grantTaskAccess(caller: lambda.Function): void {
    this.service.connections.allowFrom(caller, ec2.Port.tcp(CONTAINER_PORT), `Poolgate task access: ${caller.node.path}`);
    const inThisCluster = { ArnEquals: { "ecs:cluster": this.cluster.clusterArn } };
    caller.addToRolePolicy(new iam.PolicyStatement({ actions: ["ecs:ListTasks"], resources: ["*"], conditions: inThisCluster }));
    caller.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["ecs:DescribeTasks"],
        resources: [Stack.of(this).formatArn({ service: "ecs", resource: "task", resourceName: `${this.cluster.clusterName}/*` })],
        conditions: inThisCluster,
      }),
    );
    caller.addEnvironment("POOLGATE_ECS_CLUSTER", this.cluster.clusterArn);
    caller.addEnvironment("POOLGATE_ECS_SERVICE", this.service.serviceName);
    caller.addEnvironment("POOLGATE_TASK_PORT", String(CONTAINER_PORT));
  }

  /** Admits callers from a network (a VPN, a CI runner's subnet) to the load balancer's listener. */
  allowCallersFrom(peer: ec2.IPeer, description: string): void {
    this.loadBalancer.connections.allowFrom(peer, ec2.Port.tcp(this.listenerPort), `Poolgate callers: ${description}`);
  }

  private grantsOf(grant: GatewayGrant): PrincipalGrants {
    const clusters: PrincipalGrants["clusters"] = grant.admin && grant.access === undefined ? {} : { [this.clusterName]: grant.access ?? "read-write" };
    return { clusters, admin: grant.admin ?? false, ...(grant.maxInFlight === undefined ? {} : { maxInFlight: grant.maxInFlight }) };
  }
}
