/**
 * Neon's SQL-over-HTTP protocol, `POST /sql`, on the PostgreSQL clusters: what
 * `@neondatabase/serverless`'s `neon()` (and drizzle `neon-http` on it) sends, on the same planner and
 * pipeline as `/v1/query` and `/v1/batch` — reads to replicas, read-only principals, idempotency keys
 * (the `Idempotency-Key` header), a write's consistency token in `x-poolgate-consistency-token`. Its
 * own Fastify scope: the driver posts JSON as text/plain, and reads failures in Neon's shape
 * (gateway/neon/errors.ts). See docs/neon.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type NeonQuery, neonRequestSchema } from "../../../schemas/neon.js";
import type { StatementResult } from "../../engines/engine.js";
import { GatewayError } from "../../errors.js";
import { NATIVE_SURFACE, type WorkRequest } from "../../execution/plan.js";
import { neonConnectionString, neonCredential } from "../../neon/connection-string.js";
import { neonErrorAnswer } from "../../neon/errors.js";
import { CONSISTENCY_TOKEN_HEADER, neonRequestOptions, type NeonRequestOptions } from "../../neon/request-headers.js";
import { neonBatchJson, neonResultJson } from "../../neon/results.js";
import { registerProtocolScope } from "./protocol-scope.js";
import { clusterNamed, type HttpContext } from "../context.js";
import { idempotencyKeyOf, REPLAY_HEADER } from "../idempotency-header.js";
import { noteWork } from "../observe.js";
import { checkUserIsPrincipal } from "../../auth/surface-credentials.js";
import { parseBody } from "../validate.js";
import { serializeTraced } from "../../tracing/serialize-span.js";

function statementsOf(body: { query: string; params?: NeonQuery["params"] } | { queries: NeonQuery[] }): WorkRequest["statements"] {
  const queries = "queries" in body ? body.queries : [body];
  return queries.map(({ query, params }) => ({ sql: query, params: params ?? [] }));
}

function answer(results: readonly StatementResult[], batch: boolean, options: NeonRequestOptions): string {
  return batch ? neonBatchJson(results, options.arrayMode) : neonResultJson(results[0] as StatementResult, options.arrayMode);
}

async function runSql(context: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = parseBody(neonRequestSchema, request.body);
  const target = neonConnectionString(request.headers);
  checkUserIsPrincipal(request, target.user, "the connection string");
  const cluster = clusterNamed(context, target.database);
  if (cluster.engine.kind !== "postgres") {
    throw new GatewayError("INVALID_REQUEST", `cluster "${cluster.name}" is not PostgreSQL: Neon's protocol is served on PostgreSQL clusters only`, {
      issues: [{ path: "neon-connection-string", message: "not a PostgreSQL cluster" }],
    });
  }
  const runAs = context.policy.runAs(request.caller, cluster.name);
  const options = neonRequestOptions(request.headers);
  const batch = "queries" in body;
  const key = idempotencyKeyOf(request, undefined);
  const work: WorkRequest = {
    statements: statementsOf(body),
    scope: batch ? "batch" : "statement",
    idempotency:
      key === undefined
        ? undefined
        : { key, surface: "neon", shape: { arrayMode: options.arrayMode, rawTextOutput: options.rawTextOutput }, answer: (results) => answer(results, batch, options) },
    timeoutMs: undefined,
    bigNumbers: "string",
    textValues: options.rawTextOutput,
    intent: undefined,
    consistencyToken: options.consistencyToken,
    maxStalenessMs: undefined,
    isolation: batch ? options.isolation : undefined,
    readOnly: batch ? options.readOnly : undefined,
    deferrable: batch ? options.deferrable : undefined,
  };
  const plan = cluster.pipeline.plan(work, NATIVE_SURFACE, runAs);
  noteWork(request, cluster.name, plan.intent);
  const { value } = await cluster.pipeline.run(plan);
  if (value.consistencyToken !== undefined) void reply.header(CONSISTENCY_TOKEN_HEADER, value.consistencyToken);
  if (value.recorded?.replayed) void reply.header(REPLAY_HEADER, "true");
  const json = value.recorded === undefined ? serializeTraced((results) => answer(results, batch, options), value.value) : value.recorded.answer;
  return reply.type("application/json").send(json);
}

export function registerNeonRoutes(app: FastifyInstance, context: HttpContext): void {
  registerProtocolScope(
    app,
    context,
    (error) => neonErrorAnswer(error),
    (scope) => scope.post("/sql", { config: { credentialOf: neonCredential } }, (request, reply) => runSql(context, request, reply)),
  );
}
