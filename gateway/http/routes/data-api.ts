/**
 * The RDS Data API surface: `POST /Execute`, `/BatchExecute`, `/BeginTransaction`,
 * `/CommitTransaction`, `/RollbackTransaction` and `/ExecuteSql`, in the JSON shapes
 * `@aws-sdk/client-rds-data` sends and parses. Its own Fastify scope, so that every failure — body
 * parsing included — is answered the way the SDK reads errors: `x-amzn-ErrorType` plus `{message, code}`.
 * `x-amzn-RequestId` is on every answer. SigV4 headers are accepted and not verified.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  batchExecuteStatementSchema,
  beginTransactionSchema,
  endTransactionSchema,
  executeStatementSchema,
} from "../../../schemas/data-api.js";
import { DATA_API_EXTENSIONS, type DataApiExtension } from "../../config/schema.js";
import { DataApiRefusal, toDataApiError } from "../../data-api/errors.js";
import type { DataApiAnswer, DataApiService } from "../../data-api/service.js";
import { GatewayError } from "../../errors.js";
import type { HttpContext } from "../context.js";
import { logFailure, toGatewayError } from "../error-handler.js";
import { jsonBodyReader } from "../body-reader.js";
import { noteOutcome, observedWork } from "../observe.js";
import { DATA_API_IDEMPOTENCY_HEADER, idempotencyKeyOf, REPLAY_HEADER } from "../idempotency-header.js";

/** A longValue with more digits than a double keeps exactly. */
const BIG_LONG_VALUE = /"longValue"\s*:\s*(-?\d{16,})(?![\d.eE])/g;

/** Opt-in, per request, to behaviour beyond the Data API's: a comma-separated list of extensions. */
export const EXTENSIONS_HEADER = "x-poolgate-extensions";

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
  throw new DataApiRefusal("BadRequestException", `invalid request: ${where}${first?.message ?? "does not match the operation's shape"}`);
}

function extensionsOf(request: FastifyRequest): Set<DataApiExtension> {
  const header = request.headers[EXTENSIONS_HEADER];
  if (typeof header !== "string" || header.trim() === "") return new Set();
  const names = header.split(",").map((name) => name.trim().toLowerCase());
  for (const name of names) {
    if (!(DATA_API_EXTENSIONS as readonly string[]).includes(name)) {
      throw new DataApiRefusal("BadRequestException", `unknown ${EXTENSIONS_HEADER} value "${name}"; known: ${DATA_API_EXTENSIONS.join(", ")}`);
    }
  }
  return new Set(names as DataApiExtension[]);
}

function send(reply: FastifyReply, request: FastifyRequest, answer: string | DataApiAnswer): FastifyReply {
  const { json, replayed } = typeof answer === "string" ? { json: answer, replayed: false } : answer;
  if (replayed) void reply.header(REPLAY_HEADER, "true");
  return reply.header("x-amzn-RequestId", request.id).type("application/json").send(json);
}

/**
 * The extension's idempotency key (`x-poolgate-idempotency-key`, added by an SDK middleware), refused
 * as a BadRequestException when malformed.
 */
function keyOf(request: FastifyRequest): string | undefined {
  try {
    return idempotencyKeyOf(request, undefined, DATA_API_IDEMPOTENCY_HEADER);
  } catch (err) {
    throw new DataApiRefusal("BadRequestException", err instanceof Error ? err.message : String(err));
  }
}

export function registerDataApiRoutes(app: FastifyInstance, context: HttpContext, service: DataApiService): void {
  void app.register((scope, _options, done) => {
    // 64-bit longValues beyond 2^53 (boto3, Java and Go clients send every digit) are read as digit
    // strings before JSON.parse can round them; the schema accepts both forms.
    scope.removeContentTypeParser("application/json");
    scope.addContentTypeParser(
      "application/json",
      jsonBodyReader(context.config.dataApi.maxRequestBytes, (text) => text.replace(BIG_LONG_VALUE, '"longValue":"$1"')),
    );
    scope.setErrorHandler((err, request, reply) => {
      const gatewayError = err instanceof DataApiRefusal ? err : toGatewayError(err);
      const error = toDataApiError(gatewayError);
      noteOutcome(request, gatewayError instanceof GatewayError ? gatewayError.code : error.name);
      if (gatewayError instanceof GatewayError) logFailure(gatewayError, err, request, context.logger);
      return reply
        .code(error.status)
        .header("x-amzn-RequestId", request.id)
        .header("x-amzn-ErrorType", error.name)
        .type("application/json")
        .send(JSON.stringify({ message: error.message, code: error.name }));
    });
    const guard = () => {
      if (context.isDraining()) throw new GatewayError("GATEWAY_DRAINING", "the gateway is shutting down; retry against another instance");
    };
    const options = { bodyLimit: context.config.dataApi.maxRequestBytes, config: { dataApi: true } };

    scope.post("/Execute", options, async (request, reply) => {
      guard();
      return send(reply, request, await observedWork(request, (note) => service.execute(request.caller, parse(executeStatementSchema, request.body), extensionsOf(request), note, keyOf(request))));
    });
    scope.post("/BatchExecute", options, async (request, reply) => {
      guard();
      return send(reply, request, await observedWork(request, (note) => service.batchExecute(request.caller, parse(batchExecuteStatementSchema, request.body), extensionsOf(request), note, keyOf(request))));
    });
    scope.post("/BeginTransaction", options, async (request, reply) => {
      guard();
      return send(reply, request, await observedWork(request, (note) => service.begin(request.caller, parse(beginTransactionSchema, request.body), note)));
    });
    // Like the native surface: a draining task takes no more work, commits and rollbacks included
    // (its open transactions are rolled back when the drain ends).
    scope.post("/CommitTransaction", options, async (request, reply) => {
      guard();
      return send(reply, request, await observedWork(request, (note) => service.commit(request.caller, parse(endTransactionSchema, request.body), note, keyOf(request))));
    });
    scope.post("/RollbackTransaction", options, async (request, reply) => {
      guard();
      return send(reply, request, await observedWork(request, (note) => service.rollback(request.caller, parse(endTransactionSchema, request.body), note)));
    });
    scope.post("/ExecuteSql", options, () => {
      throw new DataApiRefusal("BadRequestException", "This API is deprecated and not available. Use ExecuteStatement API instead");
    });
    done();
  });
}
