/** The OpenAPI 3.1 document of the native API, generated from the zod wire schemas in schemas/. */
import { z } from "zod";
import { errorBodySchema } from "../../schemas/errors.js";
import { healthResponseSchema, readyResponseSchema } from "../../schemas/health.js";
import {
  batchRequestSchema,
  batchResponseSchema,
  beginRequestSchema,
  beginResponseSchema,
  endTransactionResponseSchema,
  queryRequestSchema,
  queryResponseSchema,
} from "../../schemas/query.js";

const json = (schema: z.ZodType, io: "input" | "output") => ({
  "application/json": { schema: z.toJSONSchema(schema, { io, unrepresentable: "any" }) },
});

const errorResponse = { description: "Error (see the error-code table)", content: json(errorBodySchema, "output") };

function operation(summary: string, request: z.ZodType | null, response: z.ZodType, status = "200") {
  return {
    summary,
    ...(request ? { requestBody: { required: true, content: json(request, "input") } } : {}),
    responses: { [status]: { description: "OK", content: json(response, "output") }, default: errorResponse },
  };
}

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  const idParameter = [{ name: "id", in: "path", required: true, schema: { type: "string" } }];
  return {
    openapi: "3.1.0",
    info: { title: "Poolgate native API", version },
    paths: {
      "/v1/query": { post: operation("Run one statement", queryRequestSchema, queryResponseSchema) },
      "/v1/batch": { post: operation("Run statements atomically in one transaction", batchRequestSchema, batchResponseSchema) },
      "/v1/transactions": { post: operation("Begin an interactive transaction", beginRequestSchema, beginResponseSchema, "201") },
      "/v1/transactions/{id}/commit": {
        post: { ...operation("Commit", null, endTransactionResponseSchema), parameters: idParameter },
      },
      "/v1/transactions/{id}/rollback": {
        post: { ...operation("Roll back", null, endTransactionResponseSchema), parameters: idParameter },
      },
      "/healthz": { get: operation("Gateway and database state", null, healthResponseSchema) },
      "/readyz": { get: operation("Started and not draining", null, readyResponseSchema) },
    },
  };
}
