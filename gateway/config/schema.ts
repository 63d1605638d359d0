/**
 * The whole gateway configuration as one zod schema: defaults and descriptions live here and nowhere
 * else. Unknown keys are rejected; impossible values fail with a readable message, never clamped.
 */
import { z } from "zod";
import { checkDsqlCluster, checkDsqlGateway } from "./dsql-rules.js";

const ms = (description: string) => z.number().int().nonnegative().describe(description);

/** The URL scheme picks the engine. */
export const ENGINE_SCHEMES = { "postgres:": "postgres", "postgresql:": "postgres", "mysql:": "mysql" } as const;
export type EngineKind = (typeof ENGINE_SCHEMES)[keyof typeof ENGINE_SCHEMES];

/** The engine a database URL names, or undefined when it names none. */
export function engineOfUrl(value: string): EngineKind | undefined {
  try {
    return ENGINE_SCHEMES[new URL(value).protocol as keyof typeof ENGINE_SCHEMES];
  } catch {
    return undefined;
  }
}

const databaseUrl = z
  .string()
  .refine((value) => engineOfUrl(value) !== undefined, "must be a postgres://user:password@host:port/database or mysql://user:password@host:port/database URL");

/** Where a cluster's database credentials come from, instead of the URLs' user and password. */
export const databaseCredentialsSchema = z.discriminatedUnion("source", [
  z.strictObject({
    source: z.literal("secrets-manager"),
    secretArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/, "must be a Secrets Manager secret ARN")
      .describe("Secret holding {\"username\", \"password\"} (the RDS format); read at start and again after an authentication failure (rotation)"),
  }),
  z.strictObject({
    source: z.literal("iam"),
    username: z.string().min(1).describe("Database user granted rds_iam (PostgreSQL) or identified with AWSAuthenticationPlugin (MySQL)"),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "an AWS region such as us-east-1")
      .optional()
      .describe("Region of the cluster; default: read from an *.<region>.rds.amazonaws.com host"),
  }),
  z.strictObject({
    source: z.literal("dsql"),
    username: z
      .string()
      .min(1)
      .default("admin")
      .describe("Aurora DSQL database role: admin (tokens need dsql:DbConnectAdmin) or a custom role mapped to the task's IAM role with AWS IAM GRANT (dsql:DbConnect)"),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "an AWS region such as us-east-1")
      .optional()
      .describe("Region of the cluster; default: read from a <cluster id>.dsql.<region>.on.aws host"),
  }),
]);
export type DatabaseCredentialsConfig = z.infer<typeof databaseCredentialsSchema>;

/**
 * A database login of the gateway's: a user and password given here, or any credentials source.
 * Each login has pools of its own on every endpoint.
 */
export const databaseLoginSchema = z.discriminatedUnion("source", [
  z.strictObject({
    source: z.literal("password"),
    username: z.string().min(1).describe("Database user"),
    password: z.string().describe("Its password (prefer secrets-manager outside development)"),
  }),
  ...databaseCredentialsSchema.options,
]);
export type DatabaseLoginConfig = z.infer<typeof databaseLoginSchema>;

/** The logins a cluster uses besides its read-write one (the URL's, or `credentials`). */
export const clusterLoginsSchema = z.strictObject({
  readOnly: databaseLoginSchema
    .optional()
    .describe("Login for read-only principals: a user the database limits to reading (SELECT grants only: schemas/grants/<engine>.sql)"),
  principals: z
    .record(z.string().min(1), databaseLoginSchema)
    .default({})
    .describe("Principal (as in auth.principals) -> a login of its own, used for everything it does on this cluster"),
  maxSize: z.number().int().min(1).max(10000).optional().describe("Pool size of each of these logins' pools (one per endpoint and login; the connection budget counts them all); default: pool.maxSize"),
  minIdle: z.number().int().min(0).optional().describe("Idle connections kept warm in each of these logins' pools; default: pool.minIdle"),
});
export type ClusterLoginsConfig = z.infer<typeof clusterLoginsSchema>;

/** TLS to the database. */
export const databaseTlsSchema = z.strictObject({
  mode: z
    .enum(["disable", "require", "verify-full"])
    .describe("disable: plain TCP; require: TLS without checking the certificate; verify-full: TLS, certificate chain and host name checked"),
  caFile: z
    .string()
    .min(1)
    .optional()
    .describe("PEM bundle of trusted authorities (the RDS global bundle); default: Node's trust store and NODE_EXTRA_CA_CERTS"),
});
export type DatabaseTlsConfig = z.infer<typeof databaseTlsSchema>;

/**
 * Aurora Serverless v2 at 0 ACUs pauses an instance after SecondsUntilAutoPause with no connections,
 * and resumes it when one is asked for (docs/aurora.md#serverless-v2-auto-pause).
 */
export const idleToZeroSchema = z.strictObject({
  quietMs: ms(
    "After this long with no request, every pool and the topology monitor close all their sessions (and discovery and idempotency cleanup stop) so that the database may pause; keep it well below the cluster's SecondsUntilAutoPause",
  )
    .min(100)
    .default(60000),
  resumeTimeoutMs: ms(
    "After a pause, how long the first requests wait for the database to resume (each within its own deadline; DATABASE_RESUMING for a caller whose deadline ends first); also the connect limit meanwhile. AWS: about 15 s, 30 s or more after a day paused",
  )
    .min(100)
    .default(45000),
});
export type IdleToZeroConfig = z.infer<typeof idleToZeroSchema>;

export const clusterConfigSchema = z.strictObject({
  writerUrl: databaseUrl.describe("The writer (primary) endpoint; its scheme picks the engine: postgres://user:pass@host:5432/db or mysql://user:pass@host:3306/db"),
  readerUrls: z.array(databaseUrl).default([]).describe("Reader (replica) endpoints, same scheme as the writer; reads are spread over them"),
  discovery: z
    .strictObject({
      instanceHostPattern: z
        .string()
        .refine((pattern) => pattern.split("?").length === 2, "must contain exactly one ?, which stands for the instance's server id")
        .describe("Host of each instance, where ? stands for its server id, e.g. ?.abc123xyz.us-east-1.rds.amazonaws.com"),
      port: z.number().int().min(1).max(65535).optional().describe("Instance port; default: the writer URL's"),
      refreshIntervalMs: ms("How often the instance list is read again (also at once on failover)").min(100).default(30000),
    })
    .optional()
    .describe("Aurora: discover the instances from aurora_replica_status() (PostgreSQL) or information_schema.replica_host_status (MySQL)"),
  credentials: databaseCredentialsSchema
    .optional()
    .describe("Database credentials from Secrets Manager (RDS-format secret, read again after an authentication failure: rotation), RDS IAM authentication tokens (TLS required) or Aurora DSQL tokens (which make the cluster an Aurora DSQL one); default: the URLs' user and password"),
  tls: databaseTlsSchema.optional().describe("TLS to every instance of the cluster; default: as the URL says (PostgreSQL sslmode), else none; verify-full on Aurora DSQL"),
  logins: clusterLoginsSchema
    .optional()
    .describe("More database logins: one the database limits to reading, for read-only principals, and optionally one per principal"),
  idleToZero: idleToZeroSchema
    .optional()
    .describe(
      "Let the database pause when idle (Aurora Serverless v2 with minCapacity 0): release every session after a quiet period; the first requests after it are held while the database resumes. Default: off (pools stay warm)",
    ),
}).refine(
  (cluster) => cluster.readerUrls.every((url) => engineOfUrl(url) === engineOfUrl(cluster.writerUrl)),
  { message: "readerUrls must use the same engine (URL scheme) as writerUrl", path: ["readerUrls"] },
).superRefine(checkDsqlCluster);
export type ClusterConfig = z.infer<typeof clusterConfigSchema>;

export const poolConfigSchema = z
  .strictObject({
    maxSize: z.number().int().min(1).max(10000).default(10).describe("Maximum connections per endpoint (the embedded database always uses 1)"),
    minIdle: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Idle connections kept warm (opened at start-up); default: maxSize, a fixed-size pool"),
    acquireTimeoutMs: z
      .number()
      .int()
      .min(10)
      .default(5000)
      .describe("How long a request waits for a connection before POOL_TIMEOUT / DATABASE_UNAVAILABLE"),
    connectTimeoutMs: ms("TCP + startup handshake limit for one new connection").min(10).default(5000),
    idleTimeoutMs: ms("Idle connections above minIdle are closed after this long; 0 = never").default(600000),
    maxLifetimeMs: ms("Connections are retired after this long (minus up to 2.5% jitter); 0 = never; at most 3300000 with an Aurora DSQL cluster").default(1800000),
    keepaliveMs: ms("Idle connections are pinged this often; 0 = off").default(120000),
    validationTimeoutMs: ms("Limit for the liveness check of a connection").min(10).default(2000),
    aliveBypassMs: ms("A connection idle for less than this is reused without a liveness check").default(500),
    housekeepingIntervalMs: ms("How often the housekeeper retires, pings and refills").min(10).default(5000),
  })
  .superRefine((pool, ctx) => {
    if (pool.minIdle !== undefined && pool.minIdle > pool.maxSize) {
      ctx.addIssue({ code: "custom", path: ["minIdle"], message: `minIdle (${pool.minIdle}) exceeds maxSize (${pool.maxSize})` });
    }
    if (pool.maxLifetimeMs > 0 && pool.keepaliveMs > 0 && pool.keepaliveMs >= pool.maxLifetimeMs) {
      ctx.addIssue({ code: "custom", path: ["keepaliveMs"], message: "keepaliveMs must be below maxLifetimeMs" });
    }
    if (pool.maxLifetimeMs > 0 && pool.maxLifetimeMs < 1000) {
      ctx.addIssue({ code: "custom", path: ["maxLifetimeMs"], message: "maxLifetimeMs must be 0 (off) or at least 1000" });
    }
  });
export type PoolConfig = z.infer<typeof poolConfigSchema>;

/** What the Data API surface may do beyond the real service, per resource or per request header. */
export const DATA_API_EXTENSIONS = ["read-replicas", "array-parameters", "large-results"] as const;
export type DataApiExtension = (typeof DATA_API_EXTENSIONS)[number];

export const dataApiResourceSchema = z.strictObject({
  cluster: z.string().min(1).describe("The configured cluster this resourceArn names"),
  secrets: z
    .record(
      z.string().min(1),
      z
        .strictObject({
          username: z.string().min(1).optional().describe("Database user this secretArn (the key) stands for; default: the cluster URL's"),
          password: z.string().optional().describe("Its password; default: the cluster URL's"),
        })
        .describe("Credentials this secretArn stands for ({} = the cluster URL's)"),
    )
    .optional()
    .describe("The secretArns accepted for this resource (ForbiddenException for any other); absent = any, with the cluster URL's credentials"),
  extensions: z.array(z.enum(DATA_API_EXTENSIONS)).default([]).describe("Beyond-the-Data-API behaviour on by default for this resource"),
});
export type DataApiResource = z.infer<typeof dataApiResourceSchema>;

/** What one principal may do: per-cluster access, admin routes, and its share of the gateway. */
export const principalSchema = z.strictObject({
  clusters: z
    .record(z.string().min(1), z.enum(["read-only", "read-write"]))
    .default({})
    .describe('Cluster name (or "*" for every cluster) -> access; each cluster reaches one database'),
  admin: z.boolean().default(false).describe("May call the operator routes (/healthz, /v1/admin/...)"),
  maxPoolShare: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .describe("Largest fraction of each endpoint pool this principal may hold at once; default: auth.defaults.maxPoolShare"),
  maxInFlight: z.number().int().min(1).optional().describe("Most requests of this principal in the gateway at once; default: auth.defaults.maxInFlight"),
  maxTimeoutMs: z.number().int().min(1).optional().describe("Largest statement timeout this principal may ask for; default: statements.maxTimeoutMs"),
  maxTransactionShare: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .describe("Largest fraction of each endpoint pool this principal's open interactive transactions may pin; default: auth.defaults.maxTransactionShare"),
});
export type PrincipalConfig = z.infer<typeof principalSchema>;

/**
 * "*" grants any authenticated caller; with IAM and no account list, that is any identity of any AWS
 * account that can sign a proof for this gateway's audience. Refused unless the operator names the risk.
 */
function checkWildcardAccounts(auth: { iam?: { accounts?: string[] | undefined; acceptAnyAwsAccountForWildcard: boolean } | undefined; principals: Record<string, unknown> }, ctx: z.RefinementCtx): void {
  const iam = auth.iam;
  if (iam === undefined || iam.accounts !== undefined || iam.acceptAnyAwsAccountForWildcard || !("*" in auth.principals)) return;
  ctx.addIssue({
    code: "custom",
    path: ["principals", "*"],
    message:
      'the principal "*" with auth.iam and no auth.iam.accounts admits an IAM identity of any AWS account; list your account ids in auth.iam.accounts, ' +
      "or set auth.iam.acceptAnyAwsAccountForWildcard true to accept that risk",
  });
}

const awsRegion = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "an AWS region such as us-east-1");

export const authConfigSchema = z
  .strictObject({
    iam: z
      .strictObject({
        audience: z
          .string()
          .regex(/^[A-Za-z0-9._:/-]{1,128}$/, "1 to 128 letters, digits and . _ : / -")
          .describe("The value callers sign into the x-poolgate-server-id header: binds their proofs to this gateway"),
        regions: z.array(awsRegion).min(1).describe("Regions whose STS endpoints (sts.<region>.amazonaws.com; the global one with us-east-1) callers may sign for"),
        stsEndpoint: z
          .url()
          .optional()
          .describe("Where proofs are sent (an STS interface VPC endpoint, or a test stand-in); default: https://<the proof's STS host>"),
        maxClockSkewMs: ms("A proof signed further than this from now (either way) is refused, and its cached answer expires with it").min(1000).default(300000),
        cacheTtlMs: ms("How long a verified proof's identity is cached, by its signature").default(300000),
        cacheMaxEntries: z.number().int().min(1).default(10000).describe("Most cached identities"),
        maxConcurrentChecks: z.number().int().min(1).default(16).describe("Most STS calls in flight at once; more wait their turn"),
        checkTimeoutMs: ms("Limit for one STS call").min(100).default(5000),
        accounts: z
          .array(z.string().regex(/^\d{12}$/, "a 12-digit AWS account id"))
          .min(1)
          .optional()
          .describe("Only identities of these AWS accounts are accepted (UNAUTHENTICATED otherwise); default: any account"),
        acceptAnyAwsAccountForWildcard: z
          .boolean()
          .default(false)
          .describe('Lets the principal "*" admit IAM identities of any AWS account when accounts is not set (without it, the gateway refuses to start)'),
      })
      .optional()
      .describe("Turns IAM authentication on: callers prove their IAM identity with a presigned sts:GetCallerIdentity request (x-poolgate-auth: AWS-STS <proof>)"),
    bearer: z
      .strictObject({
        tokensFile: z.string().min(1).optional().describe('JSON file {"<principal>": "<token>" or ["<token>", ...]} (tokens of 24+ printable characters)'),
        secretArn: z
          .string()
          .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/, "must be a Secrets Manager secret ARN")
          .optional()
          .describe("Secrets Manager secret holding the same JSON"),
        refreshIntervalMs: ms("How often the tokens are read again (rotation)").min(1000).default(300000),
      })
      .refine((bearer) => (bearer.tokensFile === undefined) !== (bearer.secretArn === undefined), "set exactly one of tokensFile and secretArn")
      .optional()
      .describe("Callers send a static token (x-poolgate-auth: Bearer <token>, or Authorization on the native API)"),
    principals: z
      .record(z.string().min(1), principalSchema)
      .default({})
      .describe('Role ARN (arn:aws:iam::<account>:role/<name>), IAM user ARN, bearer token name, or "*" (any authenticated caller) -> grants'),
    defaults: z
      .strictObject({
        maxPoolShare: z.number().gt(0).max(1).default(1).describe("Largest fraction of each endpoint pool one principal may hold at once"),
        maxInFlight: z.number().int().min(1).default(1000).describe("Most requests of one principal in the gateway at once (THROTTLED above)"),
        maxTransactionShare: z
          .number()
          .gt(0)
          .max(1)
          .default(0.5)
          .describe("Largest fraction of each endpoint pool one principal's open interactive transactions may pin (TOO_MANY_TRANSACTIONS above)"),
      })
      .prefault({}),
  })
  .superRefine(checkWildcardAccounts)
  .prefault({});
export type AuthConfig = z.infer<typeof authConfigSchema>;

/** How a cluster's result cache behaves; the gateway-wide values are every cluster's defaults. */
const cacheClusterFields = {
  enabled: z.boolean().describe("Requests that ask for the cache may use it"),
  maxTtlMs: ms("Largest ttlMs a request may ask for; longer asks are cut to it").min(1),
  maxStaleWhileRevalidateMs: ms("Largest staleWhileRevalidateMs a request may ask for; longer asks are cut to it"),
  sharePrincipals: z.boolean().describe("Principals share answers (the database login still separates them); false: every principal has entries of its own"),
  invalidation: z
    .enum(["cluster", "tables"])
    .describe(
      "What a write invalidates: every entry of the cluster (always right), or the entries that read the tables it names (PostgreSQL; right only where no view, trigger, rule or cascading foreign key makes a write change or a read see tables the SQL does not name)",
    ),
};

export const cacheConfigSchema = z
  .strictObject({
    store: z.enum(["memory", "valkey"]).default("memory").describe("memory: this task alone (an LRU bounded by maxBytes); valkey: shared by every task"),
    maxBytes: z.number().int().min(1024).default(67108864).describe("Bytes of entries the memory store keeps"),
    maxEntryBytes: z.number().int().min(64).default(1048576).describe("Answers larger than this are not kept"),
    valkey: z
      .strictObject({
        url: z
          .string()
          .regex(/^rediss?:\/\//, "a redis:// or rediss:// (TLS) URL")
          .describe("Valkey (ElastiCache Serverless for Valkey: rediss://user:token@host:6379) or Redis"),
        keyPrefix: z.string().min(1).default("poolgate").describe("Prefix of every key the gateway writes"),
        commandTimeoutMs: ms("A command slower than this counts as Valkey lost: the cache is bypassed until it is back").min(1).default(500),
        connectTimeoutMs: ms("Connection attempt limit").min(1).default(2000),
      })
      .optional(),
    enabled: cacheClusterFields.enabled.default(true),
    maxTtlMs: cacheClusterFields.maxTtlMs.default(300000),
    maxStaleWhileRevalidateMs: cacheClusterFields.maxStaleWhileRevalidateMs.default(60000),
    sharePrincipals: cacheClusterFields.sharePrincipals.default(false),
    invalidation: cacheClusterFields.invalidation.default("cluster"),
    clusters: z
      .record(
        z.string(),
        z.strictObject({
          enabled: cacheClusterFields.enabled.optional(),
          maxTtlMs: cacheClusterFields.maxTtlMs.optional(),
          maxStaleWhileRevalidateMs: cacheClusterFields.maxStaleWhileRevalidateMs.optional(),
          sharePrincipals: cacheClusterFields.sharePrincipals.optional(),
          invalidation: cacheClusterFields.invalidation.optional(),
        }),
      )
      .default({})
      .describe("Per cluster: any of enabled, maxTtlMs, maxStaleWhileRevalidateMs, sharePrincipals, invalidation"),
  })
  .refine((cache) => cache.store !== "valkey" || cache.valkey !== undefined, { message: "store valkey needs valkey.url", path: ["valkey"] })
  .describe("Result cache for reads that ask for it (docs/cache.md)");
export type CacheConfig = z.infer<typeof cacheConfigSchema>;

/** Query insights per principal (observability/query-insights.ts, docs/insights.md). */
export const insightsConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe("Count every statement by principal and fingerprint (GET /v1/admin/insights, the status page, poolgate_insight_* metrics); off: no cost on the hot path"),
    topPerPrincipal: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(20)
      .describe("Fingerprints kept per principal and cluster in each slice; statements of further fingerprints are counted under `other`"),
    maxPrincipals: z
      .number()
      .int()
      .min(1)
      .max(100000)
      .default(200)
      .describe("Principals (per cluster) kept in each slice; further principals' statements are counted under principal `other`"),
    sliceMs: ms("Figures are kept in slices of this length: a window is read to this precision").min(1000).default(60000),
    retainMs: ms("How long figures are kept: the longest window GET /v1/admin/insights can read").min(1000).default(3600000),
    metricsTop: z
      .number()
      .int()
      .min(0)
      .max(500)
      .default(20)
      .describe("Fingerprints exported as poolgate_insight_* series: the top by total time over metricsWindowMs (bounds the metrics' cardinality)"),
    metricsWindowMs: ms("The window the poolgate_insight_* gauges and the status page's table describe").min(1000).default(300000),
  })
  .refine((insights) => insights.retainMs >= insights.sliceMs, { message: "insights.retainMs must be at least insights.sliceMs", path: ["retainMs"] });
export type InsightsConfig = z.infer<typeof insightsConfigSchema>;

/** One trace per request with OpenTelemetry, exported over OTLP/HTTP (observability/tracing.ts, docs/tracing.md). */
export const tracingConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe("Record spans (the request, authentication, routing, failover hold, pool wait, each database round trip, serialisation) and export them over OTLP/HTTP; off: no context manager, no span object, no cost on the hot path"),
    endpoint: z
      .url()
      .default("http://127.0.0.1:4318/v1/traces")
      .describe("The OTLP/HTTP traces URL (JSON): a collector sidecar (ADOT, the OpenTelemetry Collector) or any OTLP receiver"),
    serviceName: z.string().min(1).default("poolgate").describe("The resource's service.name"),
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe("Share of traces started here that are recorded (trace id ratio); a caller's sampled flag (traceparent, X-Amzn-Trace-Id Sampled=) decides for its own traces"),
    statementText: z.boolean().default(false).describe("Record each round trip's SQL text as db.query.text (never its parameters)"),
    sqlComments: z
      .boolean()
      .default(false)
      .describe("Append a sqlcommenter comment (traceparent, principal, route) to the SQL sent, so that pg_stat_activity, Performance Insights and the processlist can be joined to traces; statements carrying one are not kept prepared"),
    maxQueueSize: z.number().int().min(1).default(2048).describe("Finished spans held for export; further spans are dropped while the exporter is behind"),
    scheduledDelayMs: ms("How often finished spans are sent").min(1).default(1000),
    exportTimeoutMs: ms("Limit for one export request").min(1).default(10000),
  })
  .describe("OpenTelemetry tracing (docs/tracing.md)");
export type TracingConfig = z.infer<typeof tracingConfigSchema>;

export const configSchema = z.strictObject({
  server: z
    .strictObject({
      host: z.string().min(1).default("127.0.0.1").describe("Listen address (env HOST)"),
      port: z.number().int().min(0).max(65535).default(8080).describe("Listen port (env PORT)"),
      maxRequestBytes: z.number().int().min(1024).default(1048576).describe("Largest accepted request body"),
      keepAliveTimeoutMs: ms("HTTP keep-alive; keep above the load balancer's idle timeout").default(72000),
      requestTimeoutMs: ms("A request's headers and body must have arrived within this long, authenticated or not, or its connection is closed: a sender trickling bytes holds a socket this long at most")
        .min(100)
        .default(10000),
      drainTimeoutMs: ms("On SIGTERM, how long in-flight work may take before it is cut off").default(20000),
      listenBacklog: z
        .number()
        .int()
        .min(1)
        .default(4096)
        .describe(
          "Connections the kernel queues before they are accepted (capped by net.core.somaxconn); Node's 511 drops a burst's SYNs, and each dropped caller waits a second for the retransmit",
        ),
    })
    .prefault({}),
  clusters: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/, "cluster names are letters, digits, _ and -"), clusterConfigSchema)
    .default({})
    .describe("Named clusters; empty means the embedded PostgreSQL"),
  defaultCluster: z.string().default("default").describe("Cluster used when a request names none"),
  embedded: z
    .strictObject({
      dataDir: z.string().min(1).default(".poolgate-data").describe("Where the embedded PostgreSQL keeps its files; one gateway per directory (a second is refused)"),
    })
    .prefault({}),
  pool: poolConfigSchema.prefault({}),
  statements: z
    .strictObject({
      defaultTimeoutMs: ms("Statement timeout when a request names none").min(1).default(30000),
      maxTimeoutMs: ms("Largest timeoutMs a request may ask for").min(1).default(300000),
      preparedCacheSize: z.number().int().min(0).default(256).describe("Prepared statements cached per connection; 0 = never prepare"),
    })
    .prefault({}),
  limits: z
    .strictObject({
      maxResultBytes: z.number().int().min(1024).default(16777216).describe("Largest result (sum of value text); RESULT_TOO_LARGE above"),
      maxResultRows: z.number().int().min(1).default(1000000).describe("Most rows one statement may return"),
      maxParams: z.number().int().min(0).max(65535).default(65535).describe("Most parameters one statement may carry"),
    })
    .prefault({}),
  streams: z
    .strictObject({
      fetchRows: z
        .number()
        .int()
        .min(1)
        .max(100000)
        .default(1000)
        .describe("Rows a stream asks the database for at a time (PostgreSQL Execute row limit; MySQL rows read before the socket pauses)"),
      idleTimeoutMs: ms("A stream whose caller takes no bytes for this long is ended (statement cancelled, session released); keep it below MySQL's net_write_timeout (60 s)").min(100).default(30000),
      maxDurationMs: ms("A stream still running after this long is ended with a STATEMENT_TIMEOUT line").min(100).default(3600000),
    })
    .prefault({}),
  transactions: z
    .strictObject({
      idleTimeoutMs: ms("An interactive transaction idle this long is rolled back").min(100).default(30000),
      maxAgeMs: ms("An interactive transaction older than this is rolled back").min(100).default(300000),
      maxOpen: z.number().int().min(0).default(1000).describe("Most interactive transactions open at once"),
    })
    .prefault({}),
  retry: z
    .strictObject({
      maxAttempts: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("At most this many attempts per request; default: no count, retries end at the request's timeoutMs"),
      baseDelayMs: ms("First backoff cap after a conflict; doubles each conflict (full jitter)").min(1).default(10),
      maxDelayMs: ms("Largest backoff cap").min(1).default(1000),
      maxTotalMs: ms("Retries end after this much time even before the request's timeoutMs; default: its timeoutMs alone").min(1).optional(),
    })
    .prefault({}),
  idempotency: z
    .strictObject({
      ttlMs: ms("How long a write's idempotency key and answer are kept: a repeat within it is answered from the record").min(1000).default(86400000),
      table: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/, "a table name, optionally schema-qualified (schema.table)")
        .optional()
        .describe("Where keys are recorded, on each cluster's own server; default: poolgate.idempotency_keys (PostgreSQL), poolgate_internal.idempotency_keys (MySQL: a database of its own, out of the application logins' reach)"),
      createTable: z.boolean().default(true).describe("Create the table (and its PostgreSQL schema) at start when it is missing; false when the grant script or migrations create it"),
      cleanupIntervalMs: ms("How often expired keys are deleted, on a cluster this task has recorded keys in (0 = never; expired keys are also replaced on reuse)").default(60000),
      cleanupBatchSize: z.number().int().min(1).max(100000).default(1000).describe("Most expired keys one cleanup deletes"),
    })
    .prefault({}),
  routing: z
    .strictObject({
      maxReplicaLagMs: ms("A replica further behind than this gets no reads until it catches up").default(5000),
      tokenWaitMs: ms("How long a read with a consistency token waits for a replica to catch up before using the primary").default(100),
      writingFunctions: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a function name"))
        .default([])
        .describe("More functions whose SELECTs must run on the primary (user functions that write)"),
    })
    .prefault({}),
  dataApi: z
    .strictObject({
      resources: z
        .record(z.string().min(1), dataApiResourceSchema)
        .default({})
        .describe("resourceArn -> cluster and secrets; empty with one cluster = every resourceArn selects it"),
      maxResponseBytes: z.number().int().min(1024).default(1048576).describe("Largest result, as the service caps it (1 MiB); UnsupportedResultException above, unless the large-results extension is on"),
      maxRequestBytes: z.number().int().min(1024).default(4194304).describe("Largest Data API request body (the service's 4 MiB)"),
      statementTimeoutMs: ms("Statement timeout of the Data API surface (the service's 45 s)").min(1).default(45000),
      transactionIdleTimeoutMs: ms("A Data API transaction idle this long is rolled back (the service's 3 minutes)").min(100).default(180000),
      transactionMaxAgeMs: ms("A Data API transaction older than this is rolled back (the service's 24 hours)").min(100).default(86400000),
    })
    .prefault({}),
  topology: z
    .strictObject({
      checkIntervalMs: ms("How often every endpoint's role, health and lag are checked").min(50).default(1000),
      checkTimeoutMs: ms("Limit for one endpoint check (connect + query)").min(10).default(1000),
      failoverWaitMs: ms("How long a write waits for a primary during a failover, within its own timeout").default(10000),
      reresolveIntervalMs: ms(
        "The monitor reconnects to each endpoint this often, so that a DNS name that moved (Aurora's cluster and reader endpoints after a failover) is followed within about this long; 0: only after a failed check",
      ).default(1000),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      requests: z.boolean().default(false).describe("One info line per answered request (request id, the caller's correlation id when sent as x-correlation-id, route, status, time, principal, cluster, outcome)"),
    })
    .prefault({}),
  peers: z
    .strictObject({
      key: z
        .string()
        .min(32, "at least 32 characters")
        .optional()
        .describe("Shared by the gateway's tasks (env POOLGATE_PEER_KEY, at least 32 characters): transaction ids then name and sign their task, and any task forwards a call to it"),
      selfUrl: z.url().optional().describe("This task's URL as its peers reach it; default: http://<its private IPv4>:<port>"),
    })
    .prefault({}),
  auth: authConfigSchema.describe("Caller authentication and authorisation; with neither iam nor bearer, the gateway listens on loopback only"),
  aws: z
    .strictObject({
      secretsManagerEndpoint: z.url().optional().describe("Secrets Manager endpoint (a VPC endpoint, or a test stand-in); default: the region's"),
    })
    .prefault({}),
  cache: cacheConfigSchema.prefault({}),
  insights: insightsConfigSchema.prefault({}),
  tracing: tracingConfigSchema.prefault({}),
  metrics: z
    .strictObject({
      emf: z
        .strictObject({
          enabled: z.boolean().default(false).describe("Write pool metrics as CloudWatch EMF lines on stdout (per endpoint: PoolAcquireWaitP99, PoolAcquireWaitMean, PoolAcquires, PoolActive, PoolIdle, PoolWaiting, PoolTotal; dimensions cluster, endpoint)"),
          intervalMs: ms("How often (one document per endpoint)").min(1000).default(60000),
          namespace: z.string().min(1).default("Poolgate").describe("CloudWatch namespace"),
        })
        .prefault({}),
    })
    .prefault({}),
}).superRefine(checkDsqlGateway);

export type GatewayConfig = z.infer<typeof configSchema>;
/** What callers may pass: every key optional. */
export type GatewayConfigInput = z.input<typeof configSchema>;
