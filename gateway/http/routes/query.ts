/** POST /v1/query (one statement, optionally inside a transaction) and POST /v1/batch (atomic). */
import type { FastifyInstance } from "fastify";
import { batchRequestSchema, queryRequestSchema } from "../../../schemas/query.js";
import type { StatementResult } from "../../engines/engine.js";
import { checkParamCount, executeOptions } from "../../execution/run-options.js";
import { type HttpContext, selectCluster, selectTransactionCluster } from "../context.js";
import { serializeResult } from "../result-shape.js";
import { noteWork } from "../observe.js";
import { keepParamSources } from "../param-sources.js";
import { parseBody } from "../validate.js";

export function registerQueryRoutes(app: FastifyInstance, context: HttpContext): void {
  app.post("/v1/query", async (request, reply) => {
    const body = parseBody(queryRequestSchema, request.body);
    checkParamCount(context.config, body.params?.length ?? 0);
    keepParamSources(request.body, [{ path: ["params"], params: body.params }]);
    const { cluster, runAs } =
      body.transactionId === undefined
        ? selectCluster(context, request.caller, body.cluster)
        : selectTransactionCluster(context, request.caller, body.transactionId, body.cluster);
    noteWork(request, cluster.name, body.transactionId !== undefined ? "transaction" : (body.intent ?? cluster.executor.intentOf(body.sql)));
    const rowMode = body.rowMode ?? "object";
    let json: string;
    if (body.transactionId !== undefined) {
      const options = executeOptions(context.config, body, runAs);
      const [result] = await cluster.transactions.run(body.transactionId, [{ sql: body.sql, params: body.params ?? [] }], options, {}, runAs);
      json = serializeResult(result as StatementResult, rowMode, 1);
    } else {
      const { value, attempts } = await cluster.executor.query(body, {}, runAs);
      json = serializeResult(value.value, rowMode, attempts, value.consistencyToken);
    }
    // Serialised here (schema: QueryResponse) so Fastify sends the text as is.
    return reply.type("application/json; charset=utf-8").send(json);
  });

  app.post("/v1/batch", async (request, reply) => {
    const body = parseBody(batchRequestSchema, request.body);
    for (const statement of body.statements) checkParamCount(context.config, statement.params?.length ?? 0);
    keepParamSources(
      request.body,
      body.statements.map((statement, at) => ({ path: ["statements", at, "params"], params: statement.params })),
    );
    const { cluster, runAs } = selectCluster(context, request.caller, body.cluster);
    noteWork(request, cluster.name, body.readOnly ? "read" : "write");
    const rowMode = body.rowMode ?? "object";
    const { value, attempts } = await cluster.executor.batch(body, {}, runAs);
    // Serialised here (schema: BatchResponse) so Fastify sends the text as is.
    const token = value.consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(value.consistencyToken)}`;
    const json = `{"results":[${value.value.map((result) => serializeResult(result, rowMode)).join(",")}],"attempts":${attempts}${token}}`;
    return reply.type("application/json; charset=utf-8").send(json);
  });
}
