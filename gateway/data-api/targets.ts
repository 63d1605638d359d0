/**
 * Which cluster (and which database credentials) a Data API call reaches: `resourceArn` names a
 * configured resource (`dataApi.resources`), whose `secrets` list the secretArns it accepts and the
 * credentials each stands for. With no resources configured and exactly one cluster, every
 * resourceArn selects that cluster with its own credentials. A secret with credentials of its own gets
 * its own clusters' worth of pools, built at start-up (`credentialVariants`).
 */
import type { Cluster, ClusterEndpoints } from "../clusters/cluster.js";
import { ConfigError } from "../config/load.js";
import type { DataApiExtension, GatewayConfig } from "../config/schema.js";
import { DataApiRefusal } from "./errors.js";

export interface DataApiTarget {
  cluster: Cluster;
  /** The configured cluster it reaches (a secret's own pools included): what grants are checked against. */
  clusterName: string;
  /** Extensions the resource turns on for every call. */
  extensions: ReadonlySet<DataApiExtension>;
}

/** A cluster reached with a secret's own credentials: its key, base cluster and rewritten URLs. */
export interface CredentialVariant {
  key: string;
  baseCluster: string;
  endpoints: ClusterEndpoints;
}

const variantKey = (resourceArn: string, secretArn: string) => `${resourceArn}\n${secretArn}`;

function withCredentials(url: string, username: string | undefined, password: string | undefined): string {
  const parsed = new URL(url);
  if (username !== undefined) parsed.username = encodeURIComponent(username);
  if (password !== undefined) parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** The secrets that carry credentials of their own, each as the cluster URLs it needs. */
export function credentialVariants(config: GatewayConfig): CredentialVariant[] {
  const variants: CredentialVariant[] = [];
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
      variants.push({
        key: variantKey(resourceArn, secretArn),
        baseCluster: resource.cluster,
        endpoints: {
          writerUrl: withCredentials(cluster.writerUrl, secret.username, secret.password),
          readerUrls: cluster.readerUrls.map((url) => withCredentials(url, secret.username, secret.password)),
          discovery: cluster.discovery,
        },
      });
    }
  }
  return variants;
}

export class DataApiTargets {
  constructor(
    private readonly config: GatewayConfig,
    private readonly clusters: ReadonlyMap<string, Cluster>,
    /** Clusters of secrets with credentials of their own, by credentialVariants' key. */
    private readonly variants: ReadonlyMap<string, Cluster>,
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
    return { cluster: this.variants.get(variantKey(resourceArn, secretArn)) ?? base, clusterName: resource.cluster, extensions };
  }
}
