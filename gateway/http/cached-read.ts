/**
 * POST /v1/query with `cache`: a plain deterministic read answered through its cluster's result cache
 * (gateway/cache/). The read itself, on a miss, runs on the primary: an entry is then never older than
 * a write whose invalidation preceded it, whatever a replica has replayed. The answer says how it was
 * served in its `cache` field and the x-poolgate-cache header.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CacheRequest, QueryRequest } from "../../schemas/query.js";
import { SHARED_BY_PRINCIPALS } from "../cache/cache-key.js";
import type { CacheAnswer, CachedRead } from "../cache/result-cache.js";
import type { Cluster } from "../clusters/cluster.js";
import type { StatementResult } from "../engines/engine.js";
import type { RunAs } from "../execution/run-as.js";
import { type PlannedStatement, type SurfacePolicy, workRequestOf } from "../execution/plan.js";
import { noteWork } from "./observe.js";
import { serializeResult } from "../results/result-shape.js";

/** A cache fill reads the primary (see above). */
const CACHE_FILL: SurfacePolicy = Object.freeze({ primaryOnly: true });

export const CACHE_HEADER = "x-poolgate-cache";

export function answerFromCache(
  request: FastifyRequest,
  reply: FastifyReply,
  cluster: Cluster,
  body: QueryRequest,
  cache: CacheRequest,
  runAs: RunAs,
): FastifyReply | Promise<FastifyReply> {
  const rowMode = body.rowMode ?? "object";
  const plan = cluster.pipeline.plan(workRequestOf(body, [{ sql: body.sql, params: body.params }], "statement"), CACHE_FILL, runAs);
  noteWork(request, cluster.name, plan.intent);
  const statement = plan.statements[0] as PlannedStatement;
  const { settings } = cluster.cache;
  let attempts = 0;
  const run = (): Promise<string> =>
    cluster.pipeline.run(plan).then(({ value, attempts: made }) => {
      attempts = made;
      return serializeResult(value.value[0] as StatementResult, rowMode).slice(0, -1);
    });
  const read: CachedRead = {
    key: {
      cluster: cluster.name,
      login: runAs.login,
      principal: settings.sharePrincipals ? SHARED_BY_PRINCIPALS : runAs.tenant,
      sql: statement.sql,
      params: statement.params,
      shape: { rowMode, bigNumbers: plan.options.bigNumbers },
    },
    analysis: statement.analysis,
    ttlMs: Math.min(cache.ttlMs, settings.maxTtlMs),
    staleWhileRevalidateMs: Math.min(cache.staleWhileRevalidateMs ?? 0, settings.maxStaleWhileRevalidateMs),
    consistencyToken: body.consistencyToken,
  };
  // A hit from a store that answers at once is sent in this turn; anything else waits for the store (and the read).
  const now = cluster.cache.readNow(read, run);
  if (now !== undefined) return send(reply, now, 0);
  return cluster.cache.read(read, run).then((answer) => send(reply, answer, answer.outcome === "miss" || answer.outcome === "bypass" ? attempts : 0));
}

function send(reply: FastifyReply, { body, outcome }: CacheAnswer, attempts: number): FastifyReply {
  // Serialised here (schema: QueryResponse) so Fastify sends the text as is.
  return reply.header(CACHE_HEADER, outcome).type("application/json; charset=utf-8").send(`${body},"attempts":${attempts},"cache":"${outcome}"}`);
}
