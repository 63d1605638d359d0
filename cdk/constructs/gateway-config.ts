/**
 * The gateway's configuration as the stack passes it (POOLGATE_CONFIG_JSON): one cluster, whose entry
 * the database target writes (Aurora: the writer endpoint with topology discovery, the gateway's own
 * logins from their secrets, TLS against the RDS CA bundle; Aurora DSQL: its endpoint and IAM-token
 * logins), callers authenticated by IAM and operators by a bearer token, pool metrics as EMF. The test
 * parses it with the gateway's own parser.
 */

/** A principal's grants, in the gateway's `auth.principals` shape. */
export interface PrincipalGrants {
  clusters: Record<string, "read-only" | "read-write">;
  admin: boolean;
  maxInFlight?: number;
  maxTimeoutMs?: number;
}

/** The start-up bounds the stack sets (start-up.ts sizes the health-check grace period from them). */
export const CHECK_TIMEOUT_MS = 1000;
export const ACQUIRE_TIMEOUT_MS = 5000;

export interface GatewayConfigInput {
  clusterName: string;
  /** `clusters.<clusterName>` (database-target.ts: `clusterConfig`). */
  cluster: Record<string, unknown>;
  audience: string;
  region: string;
  operatorTokenSecretArn: string;
  principals: Record<string, PrincipalGrants>;
  poolSize: number;
  port: number;
  /** The shared result cache (valkey-result-cache.ts): `cache.valkey`, its password from the environment. */
  valkey?: { url: string; keyPrefix: string };
  /** Tracing on, exported to this OTLP/HTTP URL (the task's collector sidecar: trace-collector.ts). */
  tracesUrl?: string;
}

/**
 * Traces a caller did not start are sampled at this ratio; a caller's own sampling decision (its
 * traceparent or X-Ray header, the client SDK sends one) is followed whatever it is.
 */
export const STACK_SAMPLE_RATIO = 0.05;

export function gatewayConfig(input: GatewayConfigInput): Record<string, unknown> {
  return {
    clusters: { [input.clusterName]: input.cluster },
    auth: {
      iam: { audience: input.audience, regions: [input.region] },
      bearer: { secretArn: input.operatorTokenSecretArn },
      principals: input.principals,
    },
    pool: { maxSize: input.poolSize, minIdle: Math.min(2, input.poolSize), acquireTimeoutMs: ACQUIRE_TIMEOUT_MS },
    server: { host: "0.0.0.0", port: input.port, drainTimeoutMs: 20000, keepAliveTimeoutMs: 75000 },
    topology: { checkIntervalMs: 1000, checkTimeoutMs: CHECK_TIMEOUT_MS },
    // Pool metrics into CloudWatch through the task's log stream (EMF): the pool-wait alarm reads them.
    metrics: { emf: { enabled: true, intervalMs: 60000, namespace: "Poolgate" } },
    ...(input.valkey === undefined ? {} : { cache: { store: "valkey", valkey: input.valkey } }),
    ...(input.tracesUrl === undefined ? {} : { tracing: { enabled: true, endpoint: input.tracesUrl, sampleRatio: STACK_SAMPLE_RATIO } }),
  };
}
