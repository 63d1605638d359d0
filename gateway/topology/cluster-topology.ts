/**
 * A cluster's topology, built from its URLs: the endpoints (the configured writer and readers; the
 * instances discovery finds join and leave later), and who keeps them: the monitor, or for the
 * embedded database a fixed view in which its one endpoint is always the primary. The endpoints'
 * records stay here: the cluster and every other part get them read-only (endpoint.ts).
 */
import type { Clock } from "../clock.js";
import type { Engine } from "../engines/engine.js";
import type { ClusterEvents } from "../events.js";
import type { Logger } from "../logger.js";
import { type DiscoverySettings, InstanceDiscovery } from "./discovery.js";
import type { Endpoint } from "./endpoint.js";
import { configuredEndpoints, type EndpointRecord } from "./endpoint-record.js";
import { InstanceReconciler, type MembershipChanges } from "./instance-reconciler.js";
import { type MonitorSettings, TopologyMonitor } from "./monitor.js";
import { FixedTopology, type Topology } from "./topology.js";

export interface ClusterTopologySource {
  cluster: string;
  writerUrl: string;
  readerUrls: readonly string[];
  /** Aurora's instance list, when configured (never for the embedded database). */
  discovery: DiscoverySettings | undefined;
  /** The embedded database: one endpoint, always the primary, never monitored. */
  embedded: boolean;
  engine: Engine;
  monitor: MonitorSettings;
  /** What the cluster does when a discovered endpoint joins or leaves (its pools). */
  membership: MembershipChanges;
}

export interface ClusterTopology {
  topology: Topology;
  /** The monitor, for every cluster but the embedded database. */
  monitor: TopologyMonitor | undefined;
  /** The live list of endpoints, writer first (discovered instances are added and removed in place). */
  endpoints: readonly Endpoint[];
  /** Keeps the endpoints in step with the instance list, when discovery is configured. */
  instances: InstanceReconciler | undefined;
}

export function clusterTopology(source: ClusterTopologySource, clock: Clock, events: ClusterEvents, logger: Logger): ClusterTopology {
  const endpoints = configuredEndpoints(source.cluster, source.writerUrl, source.readerUrls);
  if (source.embedded) {
    return { topology: new FixedTopology(endpoints[0] as EndpointRecord), monitor: undefined, endpoints, instances: undefined };
  }
  const monitor = new TopologyMonitor(endpoints, source.engine, source.monitor, logger, clock, events);
  const instances = source.discovery
    ? new InstanceReconciler(
        source.cluster,
        endpoints,
        monitor,
        new InstanceDiscovery(source.engine, source.writerUrl, source.discovery, logger),
        { refreshIntervalMs: source.discovery.refreshIntervalMs, checkTimeoutMs: source.monitor.checkTimeoutMs },
        source.membership,
        clock,
        logger,
      )
    : undefined;
  return { topology: monitor, monitor, endpoints, instances };
}
