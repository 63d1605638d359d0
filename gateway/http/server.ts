/** Builds the Fastify server: body limits, the one error handler, and the routes. */
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { GatewayError } from "../errors.js";
import type { HttpContext } from "./context.js";
import { replyWithError } from "./error-handler.js";
import { registerOwnerForwarding } from "./forward-to-owner.js";
import { buildOpenApiDocument } from "./openapi.js";
import { registerDataApiRoutes } from "./routes/data-api.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerQueryRoutes } from "./routes/query.js";
import { registerTransactionRoutes } from "./routes/transactions.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createHttpServer(context: HttpContext, version: string): FastifyInstance {
  const app = Fastify({
    bodyLimit: context.config.server.maxRequestBytes,
    keepAliveTimeout: context.config.server.keepAliveTimeoutMs,
    // Draining is answered by the routes with GATEWAY_DRAINING in our own error format.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    logger: false,
    genReqId: (request) => {
      const incoming = request.headers["x-request-id"];
      return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
  });

  // The API speaks JSON only; anything else is answered with UNSUPPORTED_MEDIA_TYPE.
  app.removeContentTypeParser("text/plain");
  // Plain JSON.parse: a "__proto__" key becomes an own property (never a prototype), and the strict
  // zod schemas reject it as an unknown field, so secure-json-parse's extra scan is not needed.
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    if (body === "") return done(new GatewayError("INVALID_REQUEST", "the JSON body is empty"), undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(new GatewayError("MALFORMED_JSON", `request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
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

  if (context.ownership) registerOwnerForwarding(app, context.ownership);
  registerQueryRoutes(app, context);
  registerTransactionRoutes(app, context);
  registerHealthRoutes(app, context);
  registerDataApiRoutes(app, context, context.dataApi);
  const openApi = buildOpenApiDocument(version);
  app.get("/openapi.json", async (_request, reply) => reply.send(openApi));
  return app;
}
