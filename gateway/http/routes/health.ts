/**
 * GET /healthz (state of the gateway and its databases; always 200 while the process serves),
 * GET /livez (the process answers: 200 from the moment it listens until it exits), GET /readyz
 * ("started and not draining": 503 while the pools first warm and while draining), GET
 * /v1/admin/topology, and POST /v1/admin/topology/refresh (look again now: the hook for RDS failover
 * events). Readiness never depends on the database once started: a failover must not make every task
 * unhealthy at once and throw the warm pools away; and start-up gives up waiting for the database
 * after a bound, so an outage at start does not keep a task unready (main.ts).
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { HealthResponse, TopologyResponse } from "../../../schemas/health.js";
import { clusterNamed, type HttpContext } from "../context.js";
import { parseBody } from "../validate.js";

const refreshRequestSchema = z.strictObject({ cluster: z.string().min(1).optional() });

export function registerHealthRoutes(app: FastifyInstance, context: HttpContext): void {
  const operator = { config: { access: "operator" as const } };
  app.get("/healthz", operator, async (_request, reply) => {
    const clusters: HealthResponse["clusters"] = {};
    for (const [name, cluster] of context.clusters) clusters[name] = cluster.health();
    const response: HealthResponse = {
      status: context.isDraining() ? "draining" : "ok",
      uptimeS: Math.round((Date.now() - context.startedAt) / 1000),
      clusters,
    };
    return reply.header("cache-control", "no-store").send(response);
  });

  const topology = (): TopologyResponse => {
    const clusters: TopologyResponse["clusters"] = {};
    for (const [name, cluster] of context.clusters) {
      const { primary, endpoints, failovers } = cluster.health();
      clusters[name] = { primary, endpoints, failovers };
    }
    return { clusters };
  };

  app.get("/v1/admin/topology", operator, async (_request, reply) => reply.header("cache-control", "no-store").send(topology()));

  app.post("/v1/admin/topology/refresh", operator, async (request, reply) => {
    const { cluster } = parseBody(refreshRequestSchema, request.body ?? {});
    const targets = cluster === undefined ? [...context.clusters.values()] : [clusterNamed(context, cluster)];
    await Promise.all(targets.map((target) => target.refresh()));
    return reply.header("cache-control", "no-store").send(topology());
  });

  app.get("/livez", { config: { access: "public" } }, async (_request, reply) => reply.header("cache-control", "no-store").send({ live: true }));

  app.get("/readyz", { config: { access: "public" } }, async (_request, reply) => {
    if (context.isDraining()) return reply.code(503).send({ ready: false, reason: "draining" });
    if (!context.isReady()) return reply.code(503).send({ ready: false, reason: "starting" });
    return reply.send({ ready: true });
  });
}
