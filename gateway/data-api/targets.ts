/**
 * Which cluster (and which database login) a Data API call reaches: `resourceArn` names a configured
 * resource (`dataApi.resources`), whose `secrets` list the secretArns it accepts and the user each
 * stands for. With no resources configured and exactly one cluster, every resourceArn selects that
 * cluster with its own login. A secret with a user of its own is a login of that cluster, with pools of
 * its own on every endpoint (`dataApiSecretLogins`).
 */
import type { Cluster } from "../clusters/cluster.js";
import { ConfigError } from "../config/load.js";
import type { DataApiExtension, GatewayConfig } from "../config/schema.js";
import type { DatabaseCredentials } from "../credentials/database-credentials.js";
import { dataApiSecretLogin, type LoginKey } from "../credentials/logins.js";
import { StaticCredentials } from "../credentials/static-credentials.js";
import { DataApiRefusal } from "./errors.js";

export interface DataApiTarget {
  cluster: Cluster;
  /** The configured cluster it reaches: what grants are checked against. */
  clusterName: string;
  /** Extensions the resource turns on for every call. */
  extensions: ReadonlySet<DataApiExtension>;
  /** The secret's own login, when it stands for a user of its own. */
  login?: LoginKey | undefined;
}

/** The URL's user and password, decoded. */
function urlLogin(url: string): { user: string; password: string } {
  const parsed = new URL(url);
  return { user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
}

/** Per cluster, the logins of the Data API secrets that stand for a user of their own. */
export function dataApiSecretLogins(config: GatewayConfig): Map<string, Map<LoginKey, DatabaseCredentials>> {
  const logins = new Map<string, Map<LoginKey, DatabaseCredentials>>();
  for (const [resourceArn, resource] of Object.entries(config.dataApi.resources)) {
    const cluster = config.clusters[resource.cluster];
    if (!cluster) continue;
    for (const [secretArn, secret] of Object.entries(resource.secrets ?? {})) {
      if (secret.username === undefined && secret.password === undefined) continue;
      // The cluster's own login comes from its credentials source, not its URLs: a secret giving only
      // half of a login would silently be completed with whatever the URL says.
      if (cluster.credentials !== undefined && (secret.username === undefined || secret.password === undefined)) {
        throw new ConfigError(
          `invalid configuration:\n  - dataApi.resources["${resourceArn}"].secrets["${secretArn}"]: cluster "${resource.cluster}" takes its credentials from ${cluster.credentials.source}; give both username and password, or neither`,
        );
      }
      const fromUrl = urlLogin(cluster.writerUrl);
      let clusterLogins = logins.get(resource.cluster);
      if (!clusterLogins) {
        clusterLogins = new Map();
        logins.set(resource.cluster, clusterLogins);
      }
      clusterLogins.set(dataApiSecretLogin(resourceArn, secretArn), new StaticCredentials(secret.username ?? fromUrl.user, secret.password ?? fromUrl.password));
    }
  }
  return logins;
}

const hasLogin = (secret: { username?: string | undefined; password?: string | undefined }): boolean =>
  secret.username !== undefined || secret.password !== undefined;

export class DataApiTargets {
  constructor(
    private readonly config: GatewayConfig,
    private readonly clusters: ReadonlyMap<string, Cluster>,
  ) {}

  resolve(resourceArn: string, secretArn: string): DataApiTarget {
    const resources = this.config.dataApi.resources;
    if (Object.keys(resources).length === 0) {
      const only = this.clusters.size === 1 ? [...this.clusters.values()][0] : undefined;
      if (!only) {
        throw new DataApiRefusal(
          "HttpEndpointNotEnabledException",
          `HttpEndpoint is not enabled for resource ${resourceArn}: several clusters are configured, so dataApi.resources must map resource ARNs to them`,
        );
      }
      return { cluster: only, clusterName: only.name, extensions: new Set() };
    }
    const resource = resources[resourceArn];
    if (!resource) throw new DataApiRefusal("HttpEndpointNotEnabledException", `HttpEndpoint is not enabled for resource ${resourceArn}`);
    const extensions = new Set(resource.extensions);
    const base = this.clusters.get(resource.cluster);
    if (!base) throw new DataApiRefusal("HttpEndpointNotEnabledException", `HttpEndpoint is not enabled for resource ${resourceArn}`);
    if (resource.secrets === undefined) return { cluster: base, clusterName: resource.cluster, extensions };
    if (!Object.hasOwn(resource.secrets, secretArn)) {
      throw new DataApiRefusal("ForbiddenException", `secret ${secretArn} is not allowed for resource ${resourceArn}`);
    }
    const secret = resource.secrets[secretArn];
    const login = secret !== undefined && hasLogin(secret) ? dataApiSecretLogin(resourceArn, secretArn) : undefined;
    return { cluster: base, clusterName: resource.cluster, extensions, login };
  }
}
