/** POST /v1/query (one statement, optionally inside a transaction) and POST /v1/batch (atomic). */
import type { FastifyInstance } from "fastify";
import { type BatchResponse, batchRequestSchema, type QueryResponse, queryRequestSchema } from "../../../schemas/query.js";
import { executeOptions } from "../../execution/run-options.js";
import { type HttpContext, selectCluster } from "../context.js";
import { shapeResult } from "../result-shape.js";
import { parseBody } from "../validate.js";

export function registerQueryRoutes(app: FastifyInstance, context: HttpContext): void {
  app.post("/v1/query", async (request, reply) => {
    const body = parseBody(queryRequestSchema, request.body);
    const cluster = selectCluster(context, body.cluster);
    const rowMode = body.rowMode ?? "object";
    let response: QueryResponse;
    if (body.transactionId !== undefined) {
      const options = executeOptions(context.config, body);
      const result = await cluster.transactions.run(body.transactionId, (connection) =>
        connection.execute(body.sql, body.params ?? [], options),
      );
      response = { ...shapeResult(result, rowMode), attempts: 1 };
    } else {
      const { value, attempts } = await cluster.executor.query(body);
      response = { ...shapeResult(value, rowMode), attempts };
    }
    return reply.header("x-request-id", request.id).send(response);
  });

  app.post("/v1/batch", async (request, reply) => {
    const body = parseBody(batchRequestSchema, request.body);
    const cluster = selectCluster(context, body.cluster);
    const rowMode = body.rowMode ?? "object";
    const { value, attempts } = await cluster.executor.batch(body);
    const response: BatchResponse = { results: value.map((result) => shapeResult(result, rowMode)), attempts };
    return reply.header("x-request-id", request.id).send(response);
  });
}
