/** POST /v1/query (one statement, optionally inside a transaction) and POST /v1/batch (atomic). */
import type { FastifyInstance } from "fastify";
import { batchRequestSchema, queryRequestSchema } from "../../../schemas/query.js";
import type { StatementResult } from "../../engines/engine.js";
import { NATIVE_SURFACE, workRequestOf } from "../../execution/plan.js";
import { type HttpContext, selectCluster, selectTransactionCluster } from "../context.js";
import { serializeResult } from "../../results/result-shape.js";
import { noteWork } from "../observe.js";
import { answerFromCache, CACHE_HEADER } from "../cached-read.js";
import { keepParamSources, keepStatementParamSources } from "../param-sources.js";
import { parseBody } from "../validate.js";
import { idempotencyKeyOf, nativeAnswer } from "../idempotency-header.js";
import { startSpan } from "../../tracing/request-trace.js";
import type { Span } from "@opentelemetry/api";

/** A traced answer's serialisation: how many characters it came to. */
function endSerializeSpan(span: Span, json: string): void {
  span.setAttribute("poolgate.response.chars", json.length);
  span.end();
}

export function registerQueryRoutes(app: FastifyInstance, context: HttpContext): void {
  // Not async: a refusal thrown here is Fastify's to answer (the error handler), and the answer is
  // sent in the turn the work ends, with no promise or turn of the handler's own.
  app.post("/v1/query", (request, reply) => {
    const body = parseBody(queryRequestSchema, request.body);
    keepStatementParamSources(request.bodyText, body.params);
    const { cluster, runAs } =
      body.transactionId === undefined
        ? selectCluster(context, request.caller, body.cluster)
        : selectTransactionCluster(context, request.caller, body.transactionId, body.cluster);
    const scope = body.transactionId === undefined ? "statement" : "transaction";
    const cacheBypass = body.cache === undefined ? undefined : cluster.cache.bypassReason(cluster.engine.reader.analyse(body.sql), scope === "transaction" || body.intent === "write");
    if (body.cache !== undefined && cacheBypass === undefined) return answerFromCache(request, reply, cluster, body, body.cache, runAs);
    if (cacheBypass !== undefined) cluster.cache.noteBypass(cacheBypass);
    const rowMode = body.rowMode ?? "object";
    const key = idempotencyKeyOf(request, body.idempotencyKey);
    const idempotency =
      key === undefined
        ? undefined
        : { key, surface: "native", shape: { rowMode, bigNumbers: body.bigNumbers }, answer: (results: readonly StatementResult[]) => serializeResult(results[0] as StatementResult, rowMode) };
    const plan = cluster.pipeline.plan(workRequestOf(body, [{ sql: body.sql, params: body.params }], scope, idempotency), NATIVE_SURFACE, runAs);
    noteWork(request, cluster.name, scope === "transaction" ? "transaction" : plan.intent);
    return cluster.pipeline.run(plan, body.transactionId).then(({ value, attempts }) => {
      if (cacheBypass !== undefined) reply.header(CACHE_HEADER, "bypass");
      if (value.recorded) return nativeAnswer(reply, value.recorded, { attempts, consistencyToken: value.consistencyToken });
      // Serialised here (schema: QueryResponse) so Fastify sends the text as is.
      const span = startSpan("poolgate.serialize");
      const json = serializeResult(value.value[0] as StatementResult, rowMode, attempts, value.consistencyToken);
      if (span !== undefined) endSerializeSpan(span, json);
      return reply.type("application/json; charset=utf-8").send(cacheBypass === undefined ? json : `${json.slice(0, -1)},"cache":"bypass"}`);
    });
  });

  app.post("/v1/batch", async (request, reply) => {
    const body = parseBody(batchRequestSchema, request.body);
    keepParamSources(
      request.bodyText,
      body.statements.map((statement, i) => ({ path: ["statements", i, "params"], params: statement.params })),
    );
    const { cluster, runAs } = selectCluster(context, request.caller, body.cluster);
    const rowMode = body.rowMode ?? "object";
    const key = idempotencyKeyOf(request, body.idempotencyKey);
    const idempotency =
      key === undefined
        ? undefined
        : {
            key,
            surface: "native",
            shape: { rowMode, bigNumbers: body.bigNumbers },
            answer: (results: readonly StatementResult[]) => `{"results":[${results.map((result) => serializeResult(result, rowMode)).join(",")}]}`,
          };
    const plan = cluster.pipeline.plan(workRequestOf(body, body.statements, "batch", idempotency), NATIVE_SURFACE, runAs);
    noteWork(request, cluster.name, plan.intent);
    const { value, attempts } = await cluster.pipeline.run(plan);
    if (value.recorded) return nativeAnswer(reply, value.recorded, { attempts, consistencyToken: value.consistencyToken });
    // Serialised here (schema: BatchResponse) so Fastify sends the text as is.
    const token = value.consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(value.consistencyToken)}`;
    const span = startSpan("poolgate.serialize");
    const json = `{"results":[${value.value.map((result) => serializeResult(result, rowMode)).join(",")}],"attempts":${attempts}${token}}`;
    if (span !== undefined) endSerializeSpan(span, json);
    return reply.type("application/json; charset=utf-8").send(json);
  });
}
