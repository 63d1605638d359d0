/**
 * What the topology tells the event hub (events.ts): failover signs, role changes, bans and resolved
 * failovers. Declared here, beside the types they carry, and merged into the hub's GatewayEventMap, so
 * the hub knows no topology type and topology/ may import the hub without a folder cycle.
 */
import type { Endpoint, EndpointRole } from "./endpoint.js";
import type { FailoverRecord } from "./monitor.js";

declare module "../events.js" {
  interface GatewayEventMap {
    /** A replica was taken out of reads for lag. */
    replicaBanned: { cluster: string; endpoint: Endpoint; reason: string };
    /** Something suggested a failover (a lost primary, a write refused as read-only). */
    failoverSignal: { cluster: string; reason: string };
    /** An endpoint turned out to reach an instance of another role (a failover, a moved DNS name). */
    roleChange: { cluster: string; endpoint: Endpoint; previous: EndpointRole };
    /** An instance (by the server id it gives itself, Aurora) was found in another role than last seen: promoted, or back as a reader. */
    instanceRoleChange: { cluster: string; serverId: string; role: "primary" | "replica"; previous: "primary" | "replica" };
    /** A failover ended with writes going to a new primary. */
    failoverResolved: { cluster: string; record: FailoverRecord };
  }
}
