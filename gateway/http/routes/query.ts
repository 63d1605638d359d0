/** POST /v1/query (one statement, optionally inside a transaction) and POST /v1/batch (atomic). */
import type { FastifyInstance } from "fastify";
import { batchRequestSchema, queryRequestSchema } from "../../../schemas/query.js";
import { executeOptions } from "../../execution/run-options.js";
import { type HttpContext, selectCluster, selectTransactionCluster } from "../context.js";
import { serializeResult } from "../result-shape.js";
import { parseBody } from "../validate.js";

export function registerQueryRoutes(app: FastifyInstance, context: HttpContext): void {
  app.post("/v1/query", async (request, reply) => {
    const body = parseBody(queryRequestSchema, request.body);
    const cluster =
      body.transactionId === undefined ? selectCluster(context, body.cluster) : selectTransactionCluster(context, body.transactionId, body.cluster);
    const rowMode = body.rowMode ?? "object";
    let json: string;
    if (body.transactionId !== undefined) {
      const options = executeOptions(context.config, body);
      const result = await cluster.transactions.run(body.transactionId, body.sql, (connection) =>
        connection.execute(body.sql, body.params ?? [], options),
      );
      json = serializeResult(result, rowMode, 1);
    } else {
      const { value, attempts } = await cluster.executor.query(body);
      json = serializeResult(value.value, rowMode, attempts, value.consistencyToken);
    }
    // Serialised here (schema: QueryResponse) so Fastify sends the text as is.
    return reply.header("x-request-id", request.id).type("application/json; charset=utf-8").send(json);
  });

  app.post("/v1/batch", async (request, reply) => {
    const body = parseBody(batchRequestSchema, request.body);
    const cluster = selectCluster(context, body.cluster);
    const rowMode = body.rowMode ?? "object";
    const { value, attempts } = await cluster.executor.batch(body);
    // Serialised here (schema: BatchResponse) so Fastify sends the text as is.
    const token = value.consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(value.consistencyToken)}`;
    const json = `{"results":[${value.value.map((result) => serializeResult(result, rowMode)).join(",")}],"attempts":${attempts}${token}}`;
    return reply.header("x-request-id", request.id).type("application/json; charset=utf-8").send(json);
  });
}
