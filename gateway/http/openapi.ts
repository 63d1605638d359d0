/** The OpenAPI 3.1 document of the native API, generated from the zod wire schemas in schemas/. */
import { z } from "zod";
import { errorBodySchema } from "../../schemas/errors.js";
import { healthResponseSchema, liveResponseSchema, readyResponseSchema, topologyResponseSchema } from "../../schemas/health.js";
import {
  batchRequestSchema,
  batchResponseSchema,
  beginRequestSchema,
  beginResponseSchema,
  commitRequestSchema,
  endTransactionResponseSchema,
  queryRequestSchema,
  queryResponseSchema,
  streamEndSchema,
  streamHeaderSchema,
  streamRequestSchema,
} from "../../schemas/query.js";
import { insightsQuerySchema, insightsResponseSchema } from "../../schemas/insights.js";
import { statusResponseSchema } from "../../schemas/status.js";

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
  const keyHeader = {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    schema: { type: "string", minLength: 1, maxLength: 255 },
    description: "Exactly-once: as idempotencyKey in the body (both given must agree)",
  };
  return {
    openapi: "3.1.0",
    info: { title: "Poolgate native API", version },
    components: {
      securitySchemes: {
        // `AWS-STS <proof>` (client iamAuth) or `Bearer <token>`; see the README's Security section.
        poolgateAuth: { type: "apiKey", in: "header", name: "x-poolgate-auth", description: "AWS-STS <proof> or Bearer <token>" },
        bearer: { type: "http", scheme: "bearer", description: "Bearer tokens also travel in Authorization on the native API" },
      },
    },
    // Needed when the gateway has authentication configured; the public routes say none.
    security: [{ poolgateAuth: [] }, { bearer: [] }],
    paths: {
      "/v1/query": { post: { ...operation("Run one statement", queryRequestSchema, queryResponseSchema), parameters: [keyHeader] } },
      "/v1/query/stream": {
        post: {
          summary: "Run one statement and stream its rows as they arrive (NDJSON)",
          requestBody: { required: true, content: json(streamRequestSchema, "input") },
          responses: {
            "200": {
              description:
                "application/x-ndjson: the first line is the header (columns); every line between the first and the last is one row (an object, or an array under rowMode); the last line is the end (command, rowCount) or, when the statement failed after the header, an error body. A body cut without its last line is incomplete.",
              content: {
                "application/x-ndjson": {
                  schema: {
                    oneOf: [
                      z.toJSONSchema(streamHeaderSchema, { io: "output" }),
                      { description: "A row", type: ["object", "array"] },
                      z.toJSONSchema(streamEndSchema, { io: "output" }),
                      z.toJSONSchema(errorBodySchema, { io: "output" }),
                    ],
                  },
                },
              },
            },
            default: errorResponse,
          },
        },
      },
      "/v1/batch": { post: { ...operation("Run statements atomically in one transaction", batchRequestSchema, batchResponseSchema), parameters: [keyHeader] } },
      "/v1/transactions": { post: operation("Begin an interactive transaction", beginRequestSchema, beginResponseSchema, "201") },
      "/v1/transactions/{id}/commit": {
        post: {
          ...operation("Commit", null, endTransactionResponseSchema),
          requestBody: { required: false, content: json(commitRequestSchema, "input") },
          parameters: [...idParameter, keyHeader],
        },
      },
      "/v1/transactions/{id}/rollback": {
        post: { ...operation("Roll back", null, endTransactionResponseSchema), parameters: idParameter },
      },
      "/healthz": { get: operation("Gateway and database state (operator)", null, healthResponseSchema) },
      "/livez": { get: { ...operation("The process answers", null, liveResponseSchema), security: [] } },
      "/readyz": { get: { ...operation("Started and not draining", null, readyResponseSchema), security: [] } },
      "/v1/admin/topology": { get: operation("Every cluster's topology and recent failovers (operator)", null, topologyResponseSchema) },
      "/v1/admin/topology/refresh": { post: operation("Check the topology now (operator)", null, topologyResponseSchema) },
      "/v1/admin/status": { get: operation("What the status page draws (operator)", null, statusResponseSchema) },
      "/v1/admin/insights": {
        get: {
          ...operation("Query insights per principal: statements by fingerprint with their figures (operator)", null, insightsResponseSchema),
          parameters: Object.entries(insightsQuerySchema.shape).map(([name, schema]) => ({
            name,
            in: "query",
            required: false,
            schema: z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }),
          })),
        },
      },
      "/metrics": {
        get: {
          summary: "Prometheus metrics (operator)",
          responses: { "200": { description: "OK", content: { "text/plain": { schema: { type: "string" } } } }, default: errorResponse },
        },
      },
      "/": {
        get: { summary: "The live status page", security: [], responses: { "200": { description: "OK", content: { "text/html": { schema: { type: "string" } } } } } },
      },
    },
  };
}
