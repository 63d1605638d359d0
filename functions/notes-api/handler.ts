/**
 * An example API Lambda behind an HTTP API (API Gateway v2 payload, IAM-authorised routes): CRUD over
 * a small `notes` table through Poolgate, written the way Powertools for AWS Lambda users write one.
 *
 * - Event Handler's HTTP `Router` routes the requests (`notes-routes.ts`); Parser validates what they
 *   carry against zod schemas (`note-requests.ts`); failures become answers in one place (`app.errorHandler`).
 * - The gateway's credential: the function's IAM role (`POOLGATE_AUDIENCE`), or a bearer token read
 *   from Secrets Manager by the Parameters utility (`POOLGATE_TOKEN_SECRET`, cached for
 *   `POOLGATE_TOKEN_MAX_AGE_S`, so a rotated token is picked up without a deploy).
 * - Nothing at module scope changes per invocation: each invocation makes its own client (fetch-only:
 *   Node's global fetch keeps the connection to the gateway warm), whose deadline is the invocation's
 *   remaining time and whose requests carry the logger's correlation id (the HTTP API's request id)
 *   as `x-correlation-id`, which the gateway logs beside its own request id.
 * - `POST /notes` with an `Idempotency-Key` header is exactly-once through the client's idempotency
 *   keys: the key (scoped to this route) becomes the write's key, so a retried request gets the note
 *   the first one created instead of a duplicate or a 409.
 * - Logger, metrics and tracer are middy middleware around the router, as for any handler: the logger
 *   gets the invocation's context and correlation id, the metrics a cold-start metric, the tracer a
 *   handler segment (with the route annotation) and, from Event Handler's tracer middleware, a
 *   subsegment per route — neither captures the response body: notes are the caller's data.
 */
import { Router } from "@aws-lambda-powertools/event-handler/http";
import { tracer as traceRoutes } from "@aws-lambda-powertools/event-handler/http/middleware/tracer";
import { Logger } from "@aws-lambda-powertools/logger";
import { correlationPaths, search } from "@aws-lambda-powertools/logger/correlationId";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { z } from "zod";
import { createClient, type PoolgateClient, type RequestSigner } from "@poolgate/client";
import { iamAuth } from "@poolgate/client/iam";
import { correlationHeader } from "../shared/correlation-header.js";
import { registerNoteRoutes } from "./notes-routes.js";

const env = z
  .object({
    POOLGATE_URL: z.url(),
    POOLGATE_CLUSTER: z.string().min(1).optional(),
    /** The gateway's auth.iam.audience: calls carry a proof of this function's IAM role. */
    POOLGATE_AUDIENCE: z.string().min(1).optional(),
    /** A Secrets Manager secret (name or ARN) whose value is a bearer token of the gateway's. */
    POOLGATE_TOKEN_SECRET: z.string().min(1).optional(),
    /** How long the token is kept before Secrets Manager is asked again, in seconds. */
    POOLGATE_TOKEN_MAX_AGE_S: z.coerce.number().int().min(1).max(3600).default(300),
    NOTES_TABLE: z.string().regex(/^[a-z_][a-z0-9_]*$/).default("notes"),
  })
  .refine((vars) => vars.POOLGATE_AUDIENCE === undefined || vars.POOLGATE_TOKEN_SECRET === undefined, {
    message: "set POOLGATE_AUDIENCE (IAM) or POOLGATE_TOKEN_SECRET (a bearer token), not both",
  })
  .parse(process.env);

const logger = new Logger({ serviceName: "notes-api", correlationIdSearchFn: search });
const metrics = new Metrics({ namespace: "Poolgate", serviceName: "notes-api" });
const tracer = new Tracer({ serviceName: "notes-api" });

/** How calls prove who the function is: its IAM role, a bearer token, or nothing (a loopback gateway). */
function gatewayCredential(): RequestSigner | undefined {
  if (env.POOLGATE_AUDIENCE) return iamAuth({ audience: env.POOLGATE_AUDIENCE });
  const secretName = env.POOLGATE_TOKEN_SECRET;
  if (secretName === undefined) return undefined;
  // The Parameters utility keeps the value for maxAge across invocations (its cache, not ours), and
  // the SDK client is traced like any other.
  const secrets = new SecretsProvider({ awsSdkV3Client: tracer.captureAWSv3Client(new SecretsManagerClient({})) });
  return async () => {
    const token = await secrets.get(secretName, { maxAge: env.POOLGATE_TOKEN_MAX_AGE_S });
    if (typeof token !== "string" || token.length === 0) throw new Error(`the secret ${secretName} holds no bearer token (a SecretString)`);
    return { "x-poolgate-auth": `Bearer ${token}` };
  };
}
const sign = gatewayCredential();

/** The client for one invocation: its deadline and correlation id are that invocation's. */
function clientFor(context: Context): PoolgateClient {
  return createClient({
    url: env.POOLGATE_URL,
    ...(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
    ...(sign ? { sign } : {}),
    headers: correlationHeader(logger, context),
    deadline: () => context.getRemainingTimeInMillis(),
  });
}

const app = new Router({ logger });
app.use(traceRoutes(tracer, { captureResponse: false, logger }));
registerNoteRoutes(app, { table: env.NOTES_TABLE, clientFor, logger, metrics });

async function serve(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> {
  logger.appendKeys({ route: event.routeKey });
  tracer.putAnnotation("route", event.routeKey);
  return app.resolve(event, context);
}

/** The Lambda entry point (see the module comment for the middleware). */
export const handler = middy(serve)
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .use(injectLambdaContext(logger, { correlationIdPath: correlationPaths.API_GATEWAY_HTTP, resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
