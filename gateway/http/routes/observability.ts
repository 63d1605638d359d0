/**
 * The operator's views: GET /metrics (Prometheus text format) and GET /v1/admin/status (what the live
 * status page draws), both for admin principals; and GET /, the status page itself, public because it
 * holds no data — it asks /v1/admin/status with the operator's credential.
 */
import type { FastifyInstance } from "fastify";
import { insightsQuerySchema } from "../../../schemas/insights.js";
import type { StatusResponse } from "../../../schemas/status.js";
import { GatewayError } from "../../errors.js";
import type { HttpContext } from "../context.js";
import { statusPageHtml } from "../status-page/page.js";
import { parseBody } from "../validate.js";

/** Rows of the status page's top-statements table. */
const STATUS_TOP = 10;

export function registerObservabilityRoutes(app: FastifyInstance, context: HttpContext): void {
  const operator = { config: { access: "operator" as const } };

  app.get("/metrics", operator, async (_request, reply) => {
    const { contentType, body } = await context.metrics.text();
    return reply.header("cache-control", "no-store").type(contentType).send(body);
  });

  app.get("/v1/admin/status", operator, async (_request, reply) => {
    const clusters: StatusResponse["clusters"] = {};
    for (const [name, cluster] of context.clusters) {
      const health = cluster.health();
      clusters[name] = {
        engine: health.engine,
        primary: health.primary,
        openTransactions: health.openTransactions,
        failovers: health.failovers,
        idle: health.idle,
        endpoints: cluster.endpoints.map((endpoint) => {
          const pool = cluster.poolOf(endpoint);
          const { total, active, idle, waiting } = pool.stats();
          return {
            name: endpoint.name,
            role: endpoint.role,
            healthy: endpoint.healthy,
            lagMs: endpoint.healthy ? endpoint.lagMs : null,
            lastError: endpoint.healthy ? null : (endpoint.lastError ?? null),
            banned: endpoint.banReason,
            positionsRefused: endpoint.positionsRefused,
            outstanding: endpoint.outstanding,
            pool: { total, active, idle, waiting, maxSize: pool.settings.maxSize },
          };
        }),
      };
    }
    const response: StatusResponse = {
      generatedAt: new Date().toISOString(),
      version: context.version,
      status: context.isDraining() ? "draining" : "ok",
      uptimeS: Math.round((Date.now() - context.startedAt) / 1000),
      totals: { ...context.metrics.totals },
      clusters,
      history: context.history.recent(),
      insights: context.insights.statusTop(STATUS_TOP),
    };
    return reply.header("cache-control", "no-store").send(response);
  });

  // Query insights per principal (docs/insights.md): filtered by principal, cluster and time window.
  app.get("/v1/admin/insights", operator, async (request, reply) => {
    const query = parseBody(insightsQuerySchema, request.query);
    const since = query.since === undefined ? undefined : Date.parse(query.since);
    const until = query.until === undefined ? undefined : Date.parse(query.until);
    if (since !== undefined && until !== undefined && since > until) {
      throw new GatewayError("INVALID_REQUEST", "invalid request: since is after until", { issues: [{ path: "since", message: "after until" }] });
    }
    const answer = context.insights.query({ principal: query.principal, cluster: query.cluster, since, until, limit: query.limit });
    return reply.header("cache-control", "no-store").send(answer);
  });

  app.get("/", { config: { access: "public" } }, async (_request, reply) =>
    reply
      .header("cache-control", "no-store")
      // The page is self-contained: its own script and styles, nothing fetched from elsewhere.
      .header("content-security-policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
      .type("text/html; charset=utf-8")
      .send(await statusPageHtml()),
  );
}
