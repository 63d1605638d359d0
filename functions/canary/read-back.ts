/**
 * How the canary reads back the marker it just wrote, so that replica lag never reads as a failure.
 * With a consistency token (community PostgreSQL's WAL position, MySQL's GTID, or whatever the
 * gateway gives on Aurora) the read may run on any reader that has applied the write, and the gateway
 * waits for one or runs it on the writer. Without one — the gateway gives none where the database
 * reports no position, as on Aurora MySQL without GTIDs — a plain read may land on a reader that has
 * not applied the write yet (Aurora readers lag by tens of milliseconds:
 * https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Replication.html), so the
 * canary reads from the writer instead.
 */
import type { CallOptions } from "@poolgate/client";

/** Where the read-back ran: a reader holding the write (by its token), or the writer. */
export type ReadBackPath = "token" | "writer";

export function readBackOptions(writeToken: string | undefined): { path: ReadBackPath; options: CallOptions } {
  if (writeToken === undefined) return { path: "writer", options: { intent: "write", consistencyToken: null } };
  return { path: "token", options: { intent: "read", consistencyToken: writeToken } };
}
