/**
 * The gateway's configuration as the stack passes it (POOLGATE_CONFIG_JSON): one cluster reached
 * through its writer endpoint with Aurora topology discovery, logged in as the gateway's own read-write
 * login (and, once the gateway reads `logins`, the read-only login for read-only principals), TLS
 * verified against the RDS CA bundle in the image, callers authenticated by IAM and operators by a
 * bearer token, pool metrics as EMF. The test parses it with the gateway's own parser.
 */

/** Where the image keeps the RDS certificate authorities (see the Dockerfile). */
export const RDS_CA_BUNDLE = "/etc/ssl/certs/rds-global-bundle.pem";

/** A principal's grants, in the gateway's `auth.principals` shape. */
export interface PrincipalGrants {
  clusters: Record<string, "read-only" | "read-write">;
  admin: boolean;
  maxInFlight?: number;
  maxTimeoutMs?: number;
}

export interface GatewayConfigInput {
  clusterName: string;
  writerUrl: string;
  instanceHostPattern: string;
  readWriteSecretArn: string;
  /** The read-only login's secret, or undefined to leave `logins` out (a gateway without issue 14's logins). */
  readOnlySecretArn: string | undefined;
  audience: string;
  region: string;
  operatorTokenSecretArn: string;
  principals: Record<string, PrincipalGrants>;
  poolSize: number;
  port: number;
}

export function gatewayConfig(input: GatewayConfigInput): Record<string, unknown> {
  return {
    clusters: {
      [input.clusterName]: {
        writerUrl: input.writerUrl,
        discovery: { instanceHostPattern: input.instanceHostPattern, refreshIntervalMs: 30000 },
        credentials: { source: "secrets-manager", secretArn: input.readWriteSecretArn },
        ...(input.readOnlySecretArn === undefined ? {} : { logins: { readOnly: { source: "secrets-manager", secretArn: input.readOnlySecretArn } } }),
        tls: { mode: "verify-full", caFile: RDS_CA_BUNDLE },
      },
    },
    auth: {
      iam: { audience: input.audience, regions: [input.region] },
      bearer: { secretArn: input.operatorTokenSecretArn },
      principals: input.principals,
    },
    pool: { maxSize: input.poolSize, minIdle: Math.min(2, input.poolSize) },
    server: { host: "0.0.0.0", port: input.port, drainTimeoutMs: 20000, keepAliveTimeoutMs: 75000 },
    topology: { checkIntervalMs: 1000, checkTimeoutMs: 1000 },
    // Pool metrics into CloudWatch through the task's log stream (EMF): the pool-wait alarm reads them.
    metrics: { emf: { enabled: true, intervalMs: 60000, namespace: "Poolgate" } },
  };
}
