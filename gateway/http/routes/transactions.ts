/** Interactive transactions: POST /v1/transactions, /v1/transactions/:id/commit and /rollback. */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { type BeginResponse, beginRequestSchema, commitRequestSchema, type EndTransactionResponse } from "../../../schemas/query.js";
import { type HttpContext, selectCluster, selectTransactionCluster } from "../context.js";
import { noteWork } from "../observe.js";
import { parseBody } from "../validate.js";
import { idempotencyKeyOf, nativeAnswer } from "../idempotency-header.js";

const endQuerySchema = z.strictObject({ cluster: z.string().min(1).optional() });

export function registerTransactionRoutes(app: FastifyInstance, context: HttpContext): void {
  app.post("/v1/transactions", async (request, reply) => {
    const body = parseBody(beginRequestSchema, request.body ?? {});
    const { cluster, runAs } = selectCluster(context, request.caller, body.cluster);
    noteWork(request, cluster.name, "transaction");
    const { id, expiresAt } = await cluster.transactions.begin(body, undefined, runAs);
    const response: BeginResponse = {
      transactionId: id,
      idleTimeoutMs: context.config.transactions.idleTimeoutMs,
      expiresAt: expiresAt.toISOString(),
    };
    return reply.code(201).send(response);
  });

  for (const action of ["commit", "rollback"] as const) {
    app.post<{ Params: { id: string } }>(`/v1/transactions/:id/${action}`, async (request, reply) => {
      const query = parseBody(endQuerySchema, request.query);
      const id = request.params.id;
      const { cluster, runAs } = selectTransactionCluster(context, request.caller, id, query.cluster);
      noteWork(request, cluster.name, "transaction");
      let response: EndTransactionResponse;
      if (action === "commit") {
        const body = parseBody(commitRequestSchema, request.body ?? {});
        const key = idempotencyKeyOf(request, body.idempotencyKey);
        const answer = JSON.stringify({ transactionId: id, outcome: "committed" } satisfies EndTransactionResponse);
        const { consistencyToken, recorded } = await cluster.transactions.commit(id, {}, runAs, key === undefined ? undefined : { key, surface: "native", answer });
        if (recorded) return nativeAnswer(reply, recorded, { consistencyToken });
        response = { transactionId: id, outcome: "committed", ...(consistencyToken === undefined ? {} : { consistencyToken }) };
      } else {
        await cluster.transactions.rollback(id, {}, runAs);
        response = { transactionId: id, outcome: "rolled back" };
      }
      return reply.send(response);
    });
  }
}
