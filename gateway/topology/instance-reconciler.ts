/**
 * Keeps a cluster's endpoints in step with its instance list (Aurora): reads the list on an interval
 * and at once on a failover sign, adds an endpoint for each instance not yet known, drops discovered
 * endpoints no longer listed (never the current primary), and keeps each endpoint's listed lag. The
 * endpoints' pools are the cluster's: it is told of every endpoint that joins or leaves.
 */
import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../logger.js";
import type { DiscoveredInstance, InstanceDiscovery } from "./discovery.js";
import type { Endpoint } from "./endpoint.js";
import { EndpointRecord } from "./endpoint-record.js";
import type { TopologyMonitor } from "./monitor.js";

/** What the cluster does when the membership changes. */
export interface MembershipChanges {
  /** A discovered endpoint joined: give it its pools. */
  joined(endpoint: Endpoint): void;
  /** A discovered endpoint left the cluster: close its pools. */
  left(endpoint: Endpoint): void;
}

export interface ReconcilerSettings {
  /** How often the instance list is read (discovery.refreshIntervalMs). */
  refreshIntervalMs: number;
  /** Bound on asking one instance for the list (topology.checkTimeoutMs). */
  checkTimeoutMs: number;
}

export class InstanceReconciler {
  private readonly discovered = new Set<EndpointRecord>();
  private discovering: Promise<void> | undefined;
  private timer: Timer | undefined;

  constructor(
    private readonly cluster: string,
    /** The cluster's endpoints, shared with the monitor: endpoints are added to and removed from this list. */
    private readonly endpoints: EndpointRecord[],
    private readonly monitor: TopologyMonitor,
    private readonly discovery: InstanceDiscovery,
    private readonly settings: ReconcilerSettings,
    private readonly changes: MembershipChanges,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Reads the list once, then on every interval. */
  async start(): Promise<void> {
    await this.discover();
    this.resume();
  }

  /** Reads the list on every interval again (after `pause`). */
  resume(): void {
    this.timer?.cancel();
    this.timer = this.clock.every(this.settings.refreshIntervalMs, () => void this.discover());
  }

  /** Stops reading the list on an interval (an idle cluster, or closing); `discover` still reads it when asked. */
  pause(): void {
    this.timer?.cancel();
  }

  /** Reads the instance list and adds or removes instance endpoints to match it; one read at a time. */
  discover(): Promise<void> {
    this.discovering ??= (async () => {
      const primary = this.monitor.primary();
      const urls = [...new Set([...(primary ? [primary.url] : []), ...this.endpoints.map((endpoint) => endpoint.url)])];
      const instances = await this.discovery.discover(urls, this.settings.checkTimeoutMs);
      if (instances) this.reconcile(instances);
    })().finally(() => {
      this.discovering = undefined;
    });
    return this.discovering;
  }

  private reconcile(instances: DiscoveredInstance[]): void {
    this.keepListedLag(instances);
    const known = new Set(this.endpoints.map((endpoint) => endpoint.url));
    for (const instance of instances) {
      if (known.has(instance.url)) continue;
      const endpoint = new EndpointRecord(`${this.cluster}/${instance.serverId}`, instance.url, false);
      endpoint.listedLagMs = instance.lagMs;
      this.endpoints.push(endpoint);
      this.discovered.add(endpoint);
      this.changes.joined(endpoint);
      this.logger.info({ endpoint: endpoint.name, writer: instance.writer }, "instance discovered");
    }
    const listed = new Set(instances.map((instance) => instance.url));
    for (const endpoint of [...this.discovered]) {
      // The current primary stays until the monitor stops calling it that.
      if (listed.has(endpoint.url) || endpoint === this.monitor.primary()) continue;
      this.discovered.delete(endpoint);
      this.endpoints.splice(this.endpoints.indexOf(endpoint), 1);
      this.monitor.forget(endpoint);
      this.changes.left(endpoint);
      this.logger.info({ endpoint: endpoint.name }, "instance left the cluster");
    }
  }

  /**
   * Each endpoint's lag as the instance list gives it (Aurora's replica_lag_in_msec), by the URL
   * discovery made for the instance or by the server id its last check reached; null when not listed.
   */
  private keepListedLag(instances: readonly DiscoveredInstance[]): void {
    for (const endpoint of this.endpoints) {
      const listed = instances.find((instance) => instance.url === endpoint.url) ?? instances.find((instance) => endpoint.serverId !== null && instance.serverId === endpoint.serverId);
      endpoint.listedLagMs = listed?.lagMs ?? null;
    }
  }
}
