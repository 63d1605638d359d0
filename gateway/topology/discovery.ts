/**
 * Topology discovery for Aurora: reads the instance list from aurora_replica_status() on any reachable
 * instance and turns each server id into an instance endpoint URL through the configured host pattern
 * ("?" stands for the server id, as in the AWS Advanced NodeJS Wrapper's clusterInstanceHostPattern).
 * Run on a schedule and at once on any sign of failover; the cluster adds and removes endpoints.
 */
import type { Engine, ListedInstance } from "../engines/engine.js";
import type { Logger } from "../logger.js";

export interface DiscoverySettings {
  instanceHostPattern: string;
  port?: number | undefined;
  refreshIntervalMs: number;
}

export interface DiscoveredInstance extends ListedInstance {
  url: string;
}

/** The writer URL with its host (and port, when configured) replaced by the instance's. */
export function instanceUrl(writerUrl: string, settings: DiscoverySettings, serverId: string): string {
  const url = new URL(writerUrl);
  url.hostname = settings.instanceHostPattern.replace("?", serverId);
  if (settings.port !== undefined) url.port = String(settings.port);
  return url.toString();
}

export class InstanceDiscovery {
  constructor(
    private readonly engine: Engine,
    private readonly writerUrl: string,
    private readonly settings: DiscoverySettings,
    private readonly logger: Logger,
  ) {}

  /** Asks each URL in turn until one answers; undefined when none does. */
  async discover(urls: readonly string[], timeoutMs: number): Promise<DiscoveredInstance[] | undefined> {
    for (const url of urls) {
      try {
        const connection = await this.engine.connect({ url, purpose: "monitor" }, timeoutMs);
        try {
          const listed = await connection.listInstances(timeoutMs);
          return listed.map((instance) => ({ ...instance, url: instanceUrl(this.writerUrl, this.settings, instance.serverId) }));
        } finally {
          connection.destroy();
        }
      } catch (err) {
        this.logger.debug({ error: this.engine.describeConnectError(err) }, "topology discovery: instance did not answer");
      }
    }
    this.logger.warn("topology discovery: no instance answered");
    return undefined;
  }
}
