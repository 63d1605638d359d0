/**
 * GET /healthz (state of the gateway and its databases; always 200 while the process serves) and
 * GET /readyz ("started and not draining"). Readiness never depends on the database: a failover must
 * not make every task unhealthy at once and throw the warm pools away.
 */
import type { FastifyInstance } from "fastify";
import type { HealthResponse, TopologyResponse } from "../../../schemas/health.js";
import type { HttpContext } from "../context.js";

export function registerHealthRoutes(app: FastifyInstance, context: HttpContext): void {
  app.get("/healthz", async (_request, reply) => {
    const clusters: HealthResponse["clusters"] = {};
    for (const [name, cluster] of context.clusters) clusters[name] = cluster.health();
    const response: HealthResponse = {
      status: context.isDraining() ? "draining" : "ok",
      uptimeS: Math.round((Date.now() - context.startedAt) / 1000),
      clusters,
    };
    return reply.header("cache-control", "no-store").send(response);
  });

  app.get("/v1/admin/topology", async (_request, reply) => {
    const clusters: TopologyResponse["clusters"] = {};
    for (const [name, cluster] of context.clusters) {
      const { primary, endpoints, failovers } = cluster.health();
      clusters[name] = { primary, endpoints, failovers };
    }
    return reply.header("cache-control", "no-store").send({ clusters });
  });

  app.get("/readyz", async (_request, reply) => {
    if (context.isDraining()) return reply.code(503).send({ ready: false, reason: "draining" });
    return reply.send({ ready: true });
  });
}
