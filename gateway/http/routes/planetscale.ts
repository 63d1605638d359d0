/**
 * PlanetScale's HTTP protocol on the MySQL clusters: what `@planetscale/database` (and drizzle
 * `planetscale-serverless` on it) sends — `POST /psdb.v1alpha1.Database/Execute` and `CreateSession`
 * — on the same planner and pipeline as `/v1/query` and the interactive transactions: reads to
 * replicas, read-only principals, fair shares, idempotency keys (the `Idempotency-Key` header), a
 * write's consistency token in `x-poolgate-consistency-token` and in the session. The driver runs a
 * transaction as BEGIN, statements and COMMIT or ROLLBACK on one session: BEGIN opens an interactive
 * transaction whose id the session carries, and the engine's reader says which statement is which.
 * Its own Fastify scope: failures in the driver's shape (gateway/planetscale/errors.ts). See
 * docs/planetscale.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type PlanetscaleSession, planetscaleExecuteSchema } from "../../../schemas/planetscale.js";
import type { Cluster } from "../../clusters/cluster.js";
import { GatewayError } from "../../errors.js";
import { transactionIsOver } from "../../failure-meaning.js";
import type { SurfacePolicy, WorkRequest } from "../../execution/plan.js";
import type { RunAs } from "../../execution/run-as.js";
import { planetscaleErrorAnswer } from "../../planetscale/errors.js";
import { EMPTY_RESULT_JSON, planetscaleResultJson } from "../../planetscale/results.js";
import { planetscaleCredential, planetscaleUser } from "../../planetscale/user.js";
import type { StatementResult } from "../../engines/engine.js";
import { registerProtocolScope } from "./protocol-scope.js";
import { clusterNamed, type HttpContext } from "../context.js";
import { logFailure, toGatewayError } from "../error-handler.js";
import { idempotencyKeyOf, REPLAY_HEADER } from "../idempotency-header.js";
import { noteOutcome, noteWork } from "../observe.js";
import { checkUserIsPrincipal } from "../../auth/surface-credentials.js";
import { parseBody } from "../validate.js";
import { serializeTraced } from "../../tracing/serialize-span.js";

export const EXECUTE_PATH = "/psdb.v1alpha1.Database/Execute";
export const CREATE_SESSION_PATH = "/psdb.v1alpha1.Database/CreateSession";
/** Read-your-writes: a write's token is answered in this header (and the session), and a read may send it back in it. */
const CONSISTENCY_TOKEN_HEADER = "x-poolgate-consistency-token";

/**
 * As the RDS Data API runs SQL in a transaction: MySQL DDL commits implicitly and the transaction goes
 * on (a new one on the same session), as it would on a MySQL session of the driver's own.
 */
const PLANETSCALE_SURFACE: SurfacePolicy = Object.freeze({ transactionEnds: "continue" });
/** A statement on an open transaction waits for the one before it (a driver's concurrent calls) instead of failing. */
const QUEUE = { queue: true } as const;

interface Target {
  cluster: Cluster;
  runAs: RunAs;
  session: PlanetscaleSession;
}

interface Answer {
  session: PlanetscaleSession;
  result: string;
  consistencyToken?: string | undefined;
  replayed?: boolean;
}

function headerToken(request: FastifyRequest): string | undefined {
  const raw = request.headers[CONSISTENCY_TOKEN_HEADER];
  const token = Array.isArray(raw) ? raw[0] : raw;
  return token === undefined || token === "" ? undefined : token;
}

/** The cluster the username names (a MySQL one), the caller's access to it, and the session the request carries. */
function targetOf(context: HttpContext, request: FastifyRequest, carried: PlanetscaleSession | null | undefined): Target {
  const user = planetscaleUser(request.headers);
  checkUserIsPrincipal(request, user.principal, "the Basic credential");
  const cluster = clusterNamed(context, user.cluster);
  if (cluster.engine.kind !== "mysql") {
    throw new GatewayError("INVALID_REQUEST", `cluster "${cluster.name}" is not MySQL: PlanetScale's protocol is served on MySQL clusters only`, {
      issues: [{ path: "authorization", message: "not a MySQL cluster" }],
    });
  }
  if (carried != null && carried.cluster !== cluster.name) {
    throw new GatewayError("INVALID_REQUEST", `the session belongs to cluster "${carried.cluster}", not "${cluster.name}"`, { issues: [{ path: "session", message: "another cluster's session" }] });
  }
  const runAs = context.policy.runAs(request.caller, cluster.name);
  return { cluster, runAs, session: carried ?? { poolgate: 1, cluster: cluster.name } };
}

function withTransaction(session: PlanetscaleSession, transactionId: string | undefined, token: string | undefined): PlanetscaleSession {
  const next: PlanetscaleSession = { poolgate: 1, cluster: session.cluster };
  if (transactionId !== undefined) next.transactionId = transactionId;
  const consistencyToken = token ?? session.consistencyToken;
  if (consistencyToken !== undefined) next.consistencyToken = consistencyToken;
  return next;
}

/** BEGIN: an interactive transaction; an open one is committed first, as MySQL commits it implicitly. */
async function begin(target: Target, readOnly: boolean, token: string | undefined): Promise<Answer> {
  const { cluster, runAs, session } = target;
  let committedToken: string | undefined;
  if (session.transactionId !== undefined) committedToken = (await cluster.transactions.commit(session.transactionId, QUEUE, runAs)).consistencyToken;
  const { id } = await cluster.transactions.begin({ ...(readOnly ? { readOnly: true } : {}), ...(token === undefined ? {} : { consistencyToken: token }) }, undefined, runAs);
  return { session: withTransaction(session, id, committedToken), result: EMPTY_RESULT_JSON, consistencyToken: committedToken };
}

/** COMMIT: the open transaction's, exactly once under an idempotency key; with none open, nothing (as MySQL). */
async function commit(target: Target, key: string | undefined): Promise<Answer> {
  const { cluster, runAs, session } = target;
  if (session.transactionId === undefined) return { session, result: EMPTY_RESULT_JSON };
  const keyed = key === undefined ? undefined : { key, surface: "planetscale", answer: EMPTY_RESULT_JSON };
  const { consistencyToken, recorded } = await cluster.transactions.commit(session.transactionId, QUEUE, runAs, keyed);
  return { session: withTransaction(session, undefined, consistencyToken), result: EMPTY_RESULT_JSON, consistencyToken, replayed: recorded?.replayed === true };
}

/** ROLLBACK: the open transaction's; one the gateway already ended (expired, aborted) has nothing left to undo. */
async function rollback(target: Target): Promise<Answer> {
  const { cluster, runAs, session } = target;
  const answer = { session: withTransaction(session, undefined, undefined), result: EMPTY_RESULT_JSON };
  if (session.transactionId === undefined) return answer;
  try {
    await cluster.transactions.rollback(session.transactionId, QUEUE, runAs);
  } catch (err) {
    if (!transactionIsOver(err)) throw err;
  }
  return answer;
}

/** A statement's result in the driver's shape. */
const firstResultJson = (results: readonly StatementResult[]): string => planetscaleResultJson(results[0] as StatementResult);

/** Any other statement: autocommit, or on the session's transaction. */
async function statement(target: Target, request: FastifyRequest, query: string, token: string | undefined): Promise<Answer> {
  const { cluster, runAs, session } = target;
  const inTransaction = session.transactionId !== undefined;
  const key = idempotencyKeyOf(request, undefined);
  const work: WorkRequest = {
    statements: [{ sql: query, params: [] }],
    scope: inTransaction ? "transaction" : "statement",
    idempotency: key === undefined ? undefined : { key, surface: "planetscale", answer: (results) => planetscaleResultJson(results[0] as StatementResult) },
    timeoutMs: undefined,
    bigNumbers: "string",
    textValues: true,
    intent: undefined,
    consistencyToken: inTransaction ? undefined : token,
    maxStalenessMs: undefined,
  };
  const plan = cluster.pipeline.plan(work, PLANETSCALE_SURFACE, runAs);
  noteWork(request, cluster.name, inTransaction ? "transaction" : plan.intent);
  const { value } = await cluster.pipeline.run(plan, session.transactionId, inTransaction ? QUEUE : undefined);
  const result = value.recorded === undefined ? serializeTraced(firstResultJson, value.value) : value.recorded.answer;
  return { session: withTransaction(session, session.transactionId, value.consistencyToken), result, consistencyToken: value.consistencyToken, replayed: value.recorded?.replayed === true };
}

function run(target: Target, request: FastifyRequest, query: string): Promise<Answer> {
  const token = headerToken(request) ?? target.session.consistencyToken;
  const control = target.cluster.engine.reader.analyse(query).transactionStatement;
  if (control !== undefined) noteWork(request, target.cluster.name, "transaction");
  switch (control?.verb) {
    case "begin":
      return begin(target, control.readOnly, token);
    case "commit":
      return commit(target, idempotencyKeyOf(request, undefined));
    case "rollback":
      return rollback(target);
    default:
      return statement(target, request, query, token);
  }
}

/** `timing` is the request's time so far in seconds, as Fastify measures it. */
function send(reply: FastifyReply, session: PlanetscaleSession, body: string): FastifyReply {
  const timing = reply.elapsedTime / 1000;
  return reply.type("application/json").send(`{"session":${JSON.stringify(session)},${body},"timing":${timing}}`);
}

async function execute(context: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = parseBody(planetscaleExecuteSchema, request.body);
  const target = targetOf(context, request, body.session);
  try {
    const answer = await run(target, request, body.query);
    if (answer.consistencyToken !== undefined) void reply.header(CONSISTENCY_TOKEN_HEADER, answer.consistencyToken);
    if (answer.replayed === true) void reply.header(REPLAY_HEADER, "true");
    return send(reply, answer.session, `"result":${answer.result}`);
  } catch (err) {
    const error = toGatewayError(err);
    const { status, error: body } = planetscaleErrorAnswer(error);
    // A failed statement keeps the session (and its transaction): the driver reads it before the error.
    if (status !== 200) throw err;
    noteOutcome(request, error.code);
    logFailure(error, err, request, context.logger);
    return send(reply, target.session, `"result":null,"error":${JSON.stringify(body)}`);
  }
}

export function registerPlanetscaleRoutes(app: FastifyInstance, context: HttpContext): void {
  const errorAnswer = (error: GatewayError) => {
    const { status, error: body } = planetscaleErrorAnswer(error);
    return { status, body: { error: body } };
  };
  registerProtocolScope(app, context, errorAnswer, (scope) => {
    const config = { credentialOf: planetscaleCredential };
    scope.post(EXECUTE_PATH, { config }, (request, reply) => execute(context, request, reply));
    // The driver's Connection.refresh(): a session with nothing open yet.
    scope.post(CREATE_SESSION_PATH, { config }, (request, reply) => {
      const target = targetOf(context, request, undefined);
      noteWork(request, target.cluster.name, "session");
      return reply.type("application/json").send(JSON.stringify({ session: target.session }));
    });
  });
}
