/** Builds the Fastify server: body limits, the one error handler, and the routes. */
import Fastify, { type FastifyInstance } from "fastify";
import type { Authenticator } from "../auth/authenticator.js";
import { GatewayError } from "../errors.js";
import { ANONYMOUS } from "../auth/caller.js";
import { registerAuthentication } from "./authenticate.js";
import { answerClientError } from "./client-error.js";
import { declareBodyText, jsonBodyReader } from "./body-reader.js";
import { RequestIds } from "./request-ids.js";
import { registerObservation } from "./observe.js";
import { registerTracing } from "./trace-requests.js";
import { registerObservabilityRoutes } from "./routes/observability.js";
import type { HttpContext } from "./context.js";
import { replyWithError } from "./error-handler.js";
import { registerOwnerForwarding } from "./forward-to-owner.js";
import { buildOpenApiDocument } from "./openapi.js";
import { registerDataApiRoutes } from "./routes/data-api.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerNeonRoutes } from "./routes/neon.js";
import { registerPlanetscaleRoutes } from "./routes/planetscale.js";
import { registerQueryRoutes } from "./routes/query.js";
import { registerStreamRoutes } from "./routes/stream.js";
import { registerTransactionRoutes } from "./routes/transactions.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createHttpServer(context: HttpContext, authenticator: Authenticator, version: string): FastifyInstance {
  const receiveMs = context.config.server.requestTimeoutMs;
  const requestIds = new RequestIds();
  const app = Fastify({
    bodyLimit: context.config.server.maxRequestBytes,
    keepAliveTimeout: context.config.server.keepAliveTimeoutMs,
    // A request's headers and body must arrive within server.requestTimeoutMs, authenticated or not:
    // a sender trickling bytes holds a socket for that long at most (Node checks every quarter of it).
    requestTimeout: receiveMs,
    http: { requestTimeout: receiveMs, headersTimeout: receiveMs, connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(receiveMs / 4))) },
    // Draining is answered by the routes with GATEWAY_DRAINING in our own error format.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    logger: false,
    // Transaction ids naming their task (peers) are long; Fastify's default is 100 characters.
    routerOptions: { maxParamLength: 512 },
    // Fastify's own refusals (a malformed URL, an over-long path parameter) in the gateway's format.
    frameworkErrors: (error, request, reply) => {
      request.caller = ANONYMOUS;
      replyWithError(new GatewayError("INVALID_REQUEST", `malformed request: ${error.message}`), request, reply, context.logger);
    },
    // Requests Node's HTTP parser refuses never reach a route: answered here, in the same format.
    clientErrorHandler: (error, socket) => answerClientError(error, socket),
    genReqId: (request) => {
      const incoming = request.headers["x-request-id"];
      return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : requestIds.take();
    },
  });

  // The API speaks JSON only; anything else is answered with UNSUPPORTED_MEDIA_TYPE.
  app.removeContentTypeParser("text/plain");
  declareBodyText(app);
  // Plain JSON.parse: a "__proto__" key becomes an own property (never a prototype), and the strict
  // zod schemas reject it as an unknown field, so secure-json-parse's extra scan is not needed.
  app.addContentTypeParser("application/json", jsonBodyReader(context.config.server.maxRequestBytes));
  // Every answer names its request, whichever route (or none, or the error handler) produced it: set
  // as the request arrives (the error handler sets it too), so that no onSend hook runs per answer.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  app.setErrorHandler((err, request, reply) => replyWithError(err, request, reply, context.logger));
  app.setNotFoundHandler((request, reply) =>
    replyWithError(
      new GatewayError("ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`),
      request,
      reply,
      context.logger,
    ),
  );

  // First: every request is timed and counted, refused ones included.
  registerObservation(app, context.metrics, context.logger, context.config.log.requests);
  if (context.tracing) registerTracing(app, context.tracing);
  registerAuthentication(app, authenticator, context.policy);
  if (context.ownership) registerOwnerForwarding(app, context.ownership);
  registerQueryRoutes(app, context);
  registerStreamRoutes(app, context);
  registerTransactionRoutes(app, context);
  registerHealthRoutes(app, context);
  registerDataApiRoutes(app, context, context.dataApi);
  registerNeonRoutes(app, context);
  registerPlanetscaleRoutes(app, context);
  registerObservabilityRoutes(app, context);
  const openApi = buildOpenApiDocument(version);
  app.get("/openapi.json", { config: { access: "public" } }, async (_request, reply) => reply.send(openApi));
  return app;
}
