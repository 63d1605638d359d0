/**
 * The parts of the status answer (`schemas/status.ts`, `GET /v1/admin/status`) the page draws, named
 * once. Types only: esbuild drops these imports, so no zod reaches the browser.
 */
import type { StatusResponse, StatusSample } from "../../../../schemas/status.js";

export type { StatusResponse, StatusSample };
export type ClusterStatus = StatusResponse["clusters"][string];
export type EndpointStatus = ClusterStatus["endpoints"][number];
export type Failover = ClusterStatus["failovers"][number];
export type Insights = StatusResponse["insights"];
