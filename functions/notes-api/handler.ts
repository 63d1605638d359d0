/**
 * An example API Lambda behind an HTTP API (API Gateway v2 payload, IAM-authorised routes): CRUD over
 * a small `notes` table through Poolgate. Powertools' logger, metrics and tracer and the IAM prover
 * live at module scope; nothing at module scope changes per invocation. Each invocation makes its own
 * client (fetch-only: no sockets of its own, Node's global fetch keeps the connection to the gateway
 * warm), whose deadline is the invocation's remaining time and whose requests carry the invocation's
 * id to the gateway's log. `POST /notes` with an `Idempotency-Key` header is exactly-once: the key
 * (scoped to this route) becomes the write's idempotency key, so a retried request gets the note the
 * first one created instead of a duplicate or a 409.
 * Powertools is wired as middy middleware: the logger gets the invocation's context and the request's
 * id as correlation id, the metrics a cold-start metric, the tracer a handler segment (which carries
 * the route annotation, and not the response body: notes are the caller's data).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { correlationPaths, search } from "@aws-lambda-powertools/logger/correlationId";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit, Metrics } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { z } from "zod";
import { createClient, DatabaseError, type PoolgateClient, PoolgateError } from "@poolgate/client";
import { iamAuth } from "@poolgate/client/iam";

const env = z
  .object({
    POOLGATE_URL: z.url(),
    POOLGATE_CLUSTER: z.string().min(1).optional(),
    /** The gateway's auth.iam.audience: calls carry a proof of this function's IAM role. */
    POOLGATE_AUDIENCE: z.string().min(1).optional(),
    NOTES_TABLE: z.string().regex(/^[a-z_][a-z0-9_]*$/).default("notes"),
  })
  .parse(process.env);

const logger = new Logger({ serviceName: "notes-api", correlationIdSearchFn: search });
const metrics = new Metrics({ namespace: "Poolgate", serviceName: "notes-api" });
const tracer = new Tracer({ serviceName: "notes-api" });
const auth = env.POOLGATE_AUDIENCE ? iamAuth({ audience: env.POOLGATE_AUDIENCE }) : undefined;

/** The client for one invocation: its deadline and request id are that invocation's. */
function clientFor(context: Context): PoolgateClient {
  return createClient({
    url: env.POOLGATE_URL,
    ...(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
    ...(auth ? { sign: auth } : {}),
    headers: { "x-request-id": context.awsRequestId },
    deadline: () => context.getRemainingTimeInMillis(),
  });
}
const table = env.NOTES_TABLE;

const noteInput = z.strictObject({ title: z.string().min(1).max(200), body: z.string().max(10_000).default("") });

interface Note {
  id: number;
  title: string;
  body: string;
  updated_at: string;
}

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function parseBody(event: APIGatewayProxyEventV2): unknown {
  if (!event.body) return {};
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  return JSON.parse(text);
}

async function route(db: PoolgateClient, event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const method = event.requestContext.http.method;
  const id = event.pathParameters?.id === undefined ? undefined : Number(event.pathParameters.id);
  if (id !== undefined && !Number.isSafeInteger(id)) return json(400, { message: "id must be an integer" });
  if (method === "GET" && id === undefined) {
    const { rows } = await db.query<Note>(`select id, title, body, updated_at from ${table} order by id limit 100`, [], { intent: "read" });
    return json(200, { notes: rows });
  }
  if (method === "GET") {
    const { rows } = await db.query<Note>(`select id, title, body, updated_at from ${table} where id = $1`, [id ?? 0], { intent: "read" });
    return rows[0] ? json(200, rows[0]) : json(404, { message: "no such note" });
  }
  if (method === "POST" && id === undefined) {
    const input = noteInput.safeParse(parseBody(event));
    if (!input.success) return json(400, { message: "invalid note", issues: input.error.issues.map((issue) => issue.message) });
    // HTTP API lower-cases header names. The key is scoped to this route, so it never meets another write's.
    const key = idempotencyKeyHeader.safeParse(event.headers["idempotency-key"]);
    if (!key.success) return json(400, { message: "invalid Idempotency-Key", issues: key.error.issues.map((issue) => issue.message) });
    const { rows } = await db.query<Note>(`insert into ${table} (title, body) values ($1, $2) returning id, title, body, updated_at`, [input.data.title, input.data.body], {
      ...(key.data === undefined ? {} : { idempotencyKey: `notes-api:create:${key.data}` }),
    });
    metrics.addMetric("NoteCreated", MetricUnit.Count, 1);
    return json(201, rows[0]);
  }
  if (method === "PUT" && id !== undefined) {
    const input = noteInput.safeParse(parseBody(event));
    if (!input.success) return json(400, { message: "invalid note", issues: input.error.issues.map((issue) => issue.message) });
    const { rows } = await db.query<Note>(`update ${table} set title = $1, body = $2, updated_at = now() where id = $3 returning id, title, body, updated_at`, [
      input.data.title,
      input.data.body,
      id,
    ]);
    return rows[0] ? json(200, rows[0]) : json(404, { message: "no such note" });
  }
  if (method === "DELETE" && id !== undefined) {
    const { rowCount } = await db.query(`delete from ${table} where id = $1`, [id]);
    return rowCount ? { statusCode: 204 } : json(404, { message: "no such note" });
  }
  return json(405, { message: `${method} is not supported here` });
}

/** The caller's `Idempotency-Key` header: what the gateway accepts as a key, less room for the route's prefix. */
const idempotencyKeyHeader = z.string().regex(/^[\x21-\x7e]{1,200}$/, "printable ASCII without spaces, at most 200 characters").optional();

async function serve(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> {
  logger.appendKeys({ route: event.routeKey });
  tracer.putAnnotation("route", event.routeKey);
  try {
    return await route(clientFor(context), event);
  } catch (err) {
    if (err instanceof SyntaxError) return json(400, { message: "the body is not valid JSON" });
    if (err instanceof DatabaseError && err.sqlstate === "23505") return json(409, { message: "a note like this exists already" });
    if (err instanceof PoolgateError && err.code === "IDEMPOTENCY_KEY_REUSED") return json(422, { message: "this Idempotency-Key was used for another note" });
    logger.error("request failed", { error: err as Error, code: err instanceof PoolgateError ? err.code : undefined });
    metrics.addMetric("RequestFailed", MetricUnit.Count, 1);
    return json(err instanceof PoolgateError && err.retryable ? 503 : 500, { message: "the request failed; try again later" });
  }
}

/** The Lambda entry point (see the module comment for the middleware). */
export const handler = middy(serve)
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .use(injectLambdaContext(logger, { correlationIdPath: correlationPaths.API_GATEWAY_HTTP, resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
