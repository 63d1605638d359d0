/**
 * What a cluster pointing at Aurora DSQL may not be configured to do, checked with the rest of the
 * configuration so that a setting DSQL cannot honour stops the start with a message naming it.
 * A cluster is a DSQL one when its `credentials` come from `{"source": "dsql"}`.
 *
 * The facts behind each rule (AWS, Aurora DSQL User Guide):
 * - one regional endpoint, no instances or replicas of its own to route to;
 * - connections are TLS only, authenticated with IAM tokens (dsql:DbConnectAdmin for the `admin`
 *   role, dsql:DbConnect for custom roles mapped with `AWS IAM GRANT`): no password logins;
 * - "Maximum connection duration: 60 minutes" (CHAP_quotas.html), after which DSQL ends the session.
 *
 * Written over plain shapes (not the schema's inferred types), since the schema uses these rules.
 */
/** The part of zod's refinement context the rules use. */
interface RefinementContext {
  addIssue(issue: { code: "custom"; path: PropertyKey[]; message: string }): void;
}

interface CredentialsShape {
  source: string;
}

interface ClusterShape {
  writerUrl: string;
  readerUrls: readonly string[];
  discovery?: unknown;
  credentials?: CredentialsShape | undefined;
  tls?: { mode: string } | undefined;
  logins?: { readOnly?: CredentialsShape | undefined; principals: Record<string, CredentialsShape> } | undefined;
}

interface GatewayShape {
  clusters: Record<string, ClusterShape>;
  pool: { maxLifetimeMs: number };
  dataApi: { resources: Record<string, { cluster: string; secrets?: Record<string, { username?: string | undefined; password?: string | undefined }> | undefined }> };
}

export const DSQL_SOURCE = "dsql";

/** DSQL ends a session after 60 minutes; the pool retires its own before that (as AWS's node-postgres connector does, at 55). */
export const DSQL_MAX_LIFETIME_MS = 55 * 60_000;

/** The cluster is an Aurora DSQL one. */
export function isDsqlCluster(cluster: { credentials?: CredentialsShape | undefined }): boolean {
  return cluster.credentials?.source === DSQL_SOURCE;
}

/** URL parameters that choose TLS (sslmode, sslrootcert...): DSQL's TLS is `tls`, always on. */
function urlTlsParameters(url: string): string[] {
  try {
    return [...new URL(url).searchParams.keys()].filter((key) => /^ssl|^uselibpqcompat$/i.test(key));
  } catch {
    return [];
  }
}

/** Per cluster: DSQL's single endpoint, TLS always, IAM-token logins only. */
export function checkDsqlCluster(cluster: ClusterShape, ctx: RefinementContext): void {
  const logins = [
    ...(cluster.logins?.readOnly === undefined ? [] : [{ path: ["logins", "readOnly"], login: cluster.logins.readOnly }]),
    ...Object.entries(cluster.logins?.principals ?? {}).map(([principal, login]) => ({ path: ["logins", "principals", principal], login })),
  ];
  if (!isDsqlCluster(cluster)) {
    for (const { path, login } of logins) {
      if (login.source !== DSQL_SOURCE) continue;
      ctx.addIssue({
        code: "custom",
        path: [...path, "source"],
        message: 'an Aurora DSQL login needs the cluster to be an Aurora DSQL one: set credentials to {"source": "dsql"} too',
      });
    }
    return;
  }
  if (!/^postgres(ql)?:/i.test(cluster.writerUrl)) {
    ctx.addIssue({ code: "custom", path: ["writerUrl"], message: "Aurora DSQL speaks PostgreSQL: writerUrl must be a postgres:// URL of the cluster endpoint" });
  }
  if (cluster.readerUrls.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["readerUrls"],
      message: "Aurora DSQL is one regional endpoint with no replicas to route to: remove readerUrls (reads and writes both go to writerUrl)",
    });
  }
  if (cluster.discovery !== undefined) {
    ctx.addIssue({ code: "custom", path: ["discovery"], message: "Aurora DSQL has no instances to discover: remove discovery" });
  }
  if (cluster.tls?.mode === "disable") {
    ctx.addIssue({
      code: "custom",
      path: ["tls", "mode"],
      message: 'Aurora DSQL accepts TLS connections only: use "verify-full" (the default for a DSQL cluster) or "require"',
    });
  }
  const parameters = urlTlsParameters(cluster.writerUrl);
  if (parameters.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["writerUrl"],
      message: `chooses TLS (${parameters.join(", ")}); an Aurora DSQL cluster always uses TLS, set by clusters.<name>.tls (default verify-full): remove those URL parameters`,
    });
  }
  for (const { path, login } of logins) {
    if (login.source === DSQL_SOURCE) continue;
    ctx.addIssue({
      code: "custom",
      path: [...path, "source"],
      message: `Aurora DSQL logs in with IAM tokens only: use {"source": "dsql", "username": "<database role>"} instead of "${login.source}"`,
    });
  }
}

/** Across sections: the pool's session lifetime and Data API secrets standing for a password login. */
export function checkDsqlGateway(config: GatewayShape, ctx: RefinementContext): void {
  const dsqlClusters = Object.entries(config.clusters)
    .filter(([, cluster]) => isDsqlCluster(cluster))
    .map(([name]) => name);
  if (dsqlClusters.length === 0) return;
  const lifetime = config.pool.maxLifetimeMs;
  if (lifetime === 0 || lifetime > DSQL_MAX_LIFETIME_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["pool", "maxLifetimeMs"],
      message: `Aurora DSQL ends every connection after 60 minutes (cluster ${dsqlClusters.join(", ")}): set it between 1000 and ${DSQL_MAX_LIFETIME_MS} (55 minutes) so the pool retires sessions before DSQL cuts them (it is ${lifetime})`,
    });
  }
  for (const [resourceArn, resource] of Object.entries(config.dataApi.resources)) {
    if (!dsqlClusters.includes(resource.cluster)) continue;
    for (const [secretArn, secret] of Object.entries(resource.secrets ?? {})) {
      if (secret.username === undefined && secret.password === undefined) continue;
      ctx.addIssue({
        code: "custom",
        path: ["dataApi", "resources", resourceArn, "secrets", secretArn],
        message: `cluster ${resource.cluster} is an Aurora DSQL one, which logs in with IAM tokens only: map the secret to {} (the cluster's own login), or give the principal a login in clusters.${resource.cluster}.logins`,
      });
    }
  }
}
