/**
 * POST /v1/query/stream: one statement whose rows are sent as they arrive, as NDJSON (ndjson-stream.ts).
 * Everything before the first line — authentication, the plan's refusals, routing, the wait for a
 * session, the statement's failure before its first row — answers as /v1/query does, with an HTTP
 * error; after it, a failure is the stream's last line.
 */
import type { FastifyInstance } from "fastify";
import { streamRequestSchema } from "../../../schemas/query.js";
import { NATIVE_SURFACE, workRequestOf } from "../../execution/plan.js";
import { type HttpContext, selectCluster } from "../context.js";
import { logFailure } from "../error-handler.js";
import { NdjsonRowStream } from "../ndjson-stream.js";
import { noteOutcome, noteWork } from "../observe.js";
import { keepStatementParamSources } from "../param-sources.js";
import { rowSerializer } from "../../results/result-shape.js";
import { parseBody } from "../validate.js";

export function registerStreamRoutes(app: FastifyInstance, context: HttpContext): void {
  app.post("/v1/query/stream", async (request, reply) => {
    const body = parseBody(streamRequestSchema, request.body);
    keepStatementParamSources(request.bodyText, body.params);
    const { cluster, runAs } = selectCluster(context, request.caller, body.cluster);
    const plan = cluster.pipeline.plan(workRequestOf(body, [{ sql: body.sql, params: body.params }], "statement"), NATIVE_SURFACE, runAs);
    noteWork(request, cluster.name, plan.intent);
    const { cursor, attempts } = await cluster.pipeline.stream(plan);
    const { idleTimeoutMs, maxDurationMs } = context.config.streams;
    const stream = new NdjsonRowStream(cursor, {
      rowJson: rowSerializer(cursor.columns, body.rowMode ?? "object"),
      columns: cursor.columns,
      attempts,
      requestId: request.id,
      idleTimeoutMs,
      maxDurationMs,
      onEnd: (outcome, failure) => {
        noteOutcome(request, outcome);
        if (failure) logFailure(failure, failure.cause ?? failure, request, context.logger);
      },
    });
    return reply.type("application/x-ndjson; charset=utf-8").header("cache-control", "no-store").send(stream);
  });
}
