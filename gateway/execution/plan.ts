/**
 * Every per-request decision, made once and in one place: what runs (the statements, and what the
 * engine's SQL reader says of each), how (each statement's mode, handed to the engine with it, and the
 * limits and timeout), where (intent, freshness and
 * the deadline the router works to), how often (the retry policy) and what comes back (a consistency
 * token or not). Both surfaces hand the pipeline a plain WorkRequest with their SurfacePolicy and get
 * a Plan back; refusals (read-only principals, transaction control where the gateway owns the
 * transaction, parameter counts, foreign tokens) happen here, before anything is sent.
 */
import type { BatchRequest, Intent, Param } from "../../schemas/query.js";
import type { GatewayConfig } from "../config/schema.js";
import type { ExecuteOptions } from "../engines/engine.js";
import { AS_WRITTEN, type EngineStatement, statementMode, type TextMode } from "../engines/engine-statement.js";
import type { SqlReader, StatementAnalysis } from "../engines/sql-analysis.js";
import { GatewayError } from "../errors.js";
import type { Clock } from "../clock.js";
import { fingerprint } from "../idempotency/fingerprint.js";
import type { KeyedWork, KeyRequest } from "../idempotency/keyed-work.js";
import type { RouteRequest } from "../routing/router.js";
import type { RetrySettings } from "./retry.js";
import type { RunAs } from "./run-as.js";
import type { WorkTiming } from "./work-timing.js";
import { checkParamCount, executeOptions, type RequestRunOptions } from "./run-options.js";

/** What a surface sends: its statements and the caller's run options, nothing decided yet. */
export interface WorkRequest extends RequestRunOptions {
  statements: readonly { sql: string; params?: readonly Param[] | undefined }[];
  /**
   * Where the work runs: one autocommit statement, a batch (all statements in one transaction the
   * gateway begins and commits), or statements of an interactive transaction.
   */
  scope: "statement" | "batch" | "transaction";
  intent?: Intent | undefined;
  consistencyToken?: string | undefined;
  maxStalenessMs?: number | undefined;
  isolation?: BatchRequest["isolation"];
  readOnly?: boolean | undefined;
  /** A batch's transaction is DEFERRABLE (PostgreSQL). */
  deferrable?: boolean | undefined;
  /** The caller's idempotency key and how the surface words the answer recorded with it. */
  idempotency?: KeyRequest | undefined;
}

/** What a request body may say about how its work runs: every WorkRequest field but its statements, scope and key. */
export type WorkOptions = Omit<WorkRequest, "statements" | "scope" | "idempotency">;

/**
 * A route's WorkRequest from its validated body, with the fields spelled out: the planner reads them
 * on every request, and a spread of the validator's output with properties after it (`{ ...body,
 * scope }`) is built on V8's slow path into a dictionary-mode object (see eslint.config.js).
 */
export function workRequestOf(
  body: WorkOptions,
  statements: WorkRequest["statements"],
  scope: WorkRequest["scope"],
  idempotency?: KeyRequest,
): WorkRequest {
  return {
    statements,
    scope,
    idempotency,
    timeoutMs: body.timeoutMs,
    bigNumbers: body.bigNumbers,
    intent: body.intent,
    consistencyToken: body.consistencyToken,
    maxStalenessMs: body.maxStalenessMs,
    isolation: body.isolation,
    readOnly: body.readOnly,
  };
}

/** How a surface runs work beyond the caller's options (the Data API's rules, as the service has them). */
export interface SurfacePolicy {
  /** Run on the primary whatever the statement's intent (the Data API runs everything on the writer). */
  primaryOnly?: boolean;
  /** Skip the consistency token (a surface that has nowhere to return it saves the round trip). */
  withoutToken?: boolean;
  /** A smaller result cap than limits.maxResultBytes. */
  maxResultBytes?: number;
  /**
   * SQL that ends a transaction the gateway began (a batch, an interactive transaction). "refuse" (the
   * default): the gateway begins and ends it, such SQL is refused, and so is text the reader cannot
   * read (it could hide a COMMIT). "continue" (the RDS Data API): it runs as the service runs it — MySQL
   * DDL commits implicitly, a COMMIT or ROLLBACK sent as SQL in an interactive transaction ends the work
   * so far — and the interactive transaction goes on, a new one begun on the same session (see
   * TransactionRegistry.run); text the reader cannot read goes to the database as one statement, and
   * the database's error is the answer. A batch still refuses explicit transaction control.
   */
  transactionEnds?: "refuse" | "continue";
}

export const NATIVE_SURFACE: SurfacePolicy = Object.freeze({});

/** A statement as planned: the engine's own statement type (its text, parameters, analysis and mode), handed to it as it is. */
export type PlannedStatement = EngineStatement;

export interface Plan {
  readonly scope: WorkRequest["scope"];
  /** The statements, each in the plan's one mode (how the engine sends it: gateway transaction, read-only principal, values). */
  readonly statements: readonly PlannedStatement[];
  /** The statements' limits and timeout. */
  readonly options: ExecuteOptions;
  /** read or write: where it may run, and what the metrics label it with. */
  readonly intent: Intent;
  readonly route: RouteRequest;
  readonly retry: RetrySettings;
  /** The SQL carries its own transaction control (or, on MySQL, several statements): run once, never again. */
  readonly commitsInParts: boolean;
  readonly primaryOnly: boolean;
  readonly withToken: boolean;
  readonly isolation: BatchRequest["isolation"] | undefined;
  readonly readOnly: boolean;
  readonly deferrable?: boolean | undefined;
  /**
   * Every statement is known by the engine's reader to only read, calling only built-ins known to
   * change nothing: a session lost under it, on any instance (a writer that died included), applied
   * nothing, and it is run again.
   */
  readonly knownReadOnly: boolean;
  readonly transactionEnds: "refuse" | "continue";
  readonly runAs: RunAs;
  /**
   * A write made exactly once under the caller's idempotency key (recorded with its answer in the
   * write's own transaction); undefined without a key, and for work that commits nothing (reads, a
   * read-only principal's work), where a key is accepted and ignored.
   */
  readonly keyed: KeyedWork | undefined;
  /** Where the work's time goes, for query insights; undefined while they are off. */
  readonly timing: WorkTiming | undefined;
}

/** A statement while it is planned: its mode is set once the plan knows it. */
type Planning = { -readonly [K in keyof EngineStatement]: EngineStatement[K] };

const SCOPE_NAMES = { batch: "a batch", transaction: "an interactive transaction (use its commit and rollback endpoints)" } as const;

export class Planner {
  constructor(
    private readonly config: GatewayConfig,
    private readonly reader: SqlReader,
    private readonly isPosition: (token: string) => boolean,
    private readonly clock: Clock,
    /** The cluster's name, part of a keyed request's fingerprint. */
    private readonly clusterName = "",
  ) {}

  plan(request: WorkRequest, surface: SurfacePolicy, runAs: RunAs): Plan {
    const statements = request.statements.map((statement): Planning => {
      const params = statement.params ?? [];
      checkParamCount(this.config, params.length);
      return { sql: statement.sql, params, analysis: this.reader.analyse(statement.sql), mode: AS_WRITTEN };
    });
    const transactionEnds = surface.transactionEnds ?? "refuse";
    if (request.scope !== "statement") this.refuseTransactionControl(statements, request.scope, transactionEnds);
    if (runAs.readOnly) this.refuseForReadOnly(statements);
    let options = executeOptions(this.config, request, runAs);
    if (surface.maxResultBytes !== undefined) options = Object.assign({}, options, { maxResultBytes: Math.min(options.maxResultBytes, surface.maxResultBytes) });
    const [first] = statements as [PlannedStatement];
    const intent: Intent =
      request.scope === "statement" ? (request.intent ?? first.analysis.intent) : request.readOnly === true || runAs.readOnly ? "read" : "write";
    const keyed = this.keyed(request, statements, runAs);
    const mode = statementMode(this.textMode(request.scope, statements, runAs, keyed !== undefined), runAs.readOnly, false, request.textValues === true);
    if (mode !== AS_WRITTEN) for (const statement of statements) statement.mode = mode;
    const commitsInParts = request.scope === "statement" && !runAs.readOnly && first.analysis.commitsInParts;
    let retry: RetrySettings = commitsInParts ? Object.assign({}, this.config.retry, { maxAttempts: 1 }) : this.config.retry;
    if (keyed !== undefined) retry = Object.assign({}, retry, { unknownOutcomeRetried: true });
    return {
      scope: request.scope,
      statements,
      options,
      intent: keyed === undefined ? intent : "write",
      route: this.route(keyed === undefined ? intent : "write", request, options.timeoutMs),
      retry,
      commitsInParts,
      primaryOnly: surface.primaryOnly === true,
      withToken: surface.withoutToken !== true && !runAs.readOnly,
      isolation: request.isolation,
      readOnly: request.readOnly === true || runAs.readOnly,
      deferrable: request.deferrable,
      knownReadOnly: statements.every(({ analysis }) => analysis.understood && analysis.intent === "read" && analysis.knownFunctionsOnly),
      transactionEnds,
      runAs,
      keyed,
      timing: this.config.insights.enabled ? { startedAt: this.clock.now(), databaseMs: 0 } : undefined,
    };
  }

  /**
   * How the statements' text reaches the server (StatementMode.text). A read-only principal's string
   * cannot smuggle a second statement past its checks, and text the reader cannot read that reaches a
   * gateway transaction goes as exactly one statement, so the server refuses what could hide a second
   * one (a COMMIT) instead of running it. In a transaction the gateway began (a batch, an interactive
   * transaction, a keyed write), a hidden COMMIT must not end it.
   */
  private textMode(scope: WorkRequest["scope"], statements: readonly PlannedStatement[], runAs: RunAs, keyed: boolean): TextMode {
    if (runAs.readOnly) return "one statement";
    if (scope === "statement") return keyed ? "in gateway transaction" : "as written";
    return statements.some(({ analysis }) => !analysis.understood) ? "one statement" : "in gateway transaction";
  }

  /**
   * A keyed write, or undefined. A key is ignored where nothing commits (reads as the engine's reader
   * knows them, READ ONLY batches, a read-only principal's work: safe to run again as they are);
   * refused on a statement of an interactive transaction (the key goes with its commit) and on SQL
   * that commits by itself, which no transaction of the gateway's can hold.
   */
  private keyed(request: WorkRequest, statements: readonly PlannedStatement[], runAs: RunAs): KeyedWork | undefined {
    const keyRequest = request.idempotency;
    if (keyRequest === undefined || runAs.readOnly) return undefined;
    if (request.scope === "transaction") {
      throw new GatewayError("INVALID_REQUEST", "idempotencyKey goes with the transaction's commit, not with its statements", {
        issues: [{ path: "idempotencyKey", message: "not allowed inside an interactive transaction" }],
      });
    }
    if (request.readOnly === true || statements.every(({ analysis }) => analysis.intent === "read")) return undefined;
    const at = statements.findIndex(({ analysis }) => analysis.endsTransaction || analysis.commitsInParts);
    if (at >= 0) {
      throw new GatewayError(
        "INVALID_REQUEST",
        "idempotencyKey cannot make this SQL exactly-once: it carries its own transaction control, several statements or a statement that commits implicitly (MySQL DDL), and the key is recorded in the write's own transaction",
        { issues: [{ path: "idempotencyKey", message: `cannot be kept exactly-once: ${statements.length > 1 ? `statements.${at}.sql` : "sql"} commits by itself` }] },
      );
    }
    return {
      principal: runAs.tenant,
      key: keyRequest.key,
      fingerprint: fingerprint({
        surface: keyRequest.surface,
        cluster: this.clusterName,
        scope: request.scope,
        statements: statements.map(({ sql, params }) => ({ sql, params })),
        isolation: request.isolation,
        shape: keyRequest.shape,
      }),
      answer: keyRequest.answer,
    };
  }

  /** Where work of this intent may run, given the caller's freshness options; foreign tokens are refused. */
  route(intent: Intent, request: { consistencyToken?: string | undefined; maxStalenessMs?: number | undefined }, timeoutMs: number): RouteRequest {
    if (request.consistencyToken !== undefined && !this.isPosition(request.consistencyToken)) {
      throw new GatewayError("INVALID_REQUEST", "consistencyToken is not a token this gateway issued", {
        issues: [{ path: "consistencyToken", message: "not a token this gateway issued" }],
      });
    }
    return { intent, consistencyToken: request.consistencyToken, maxStalenessMs: request.maxStalenessMs, deadline: this.clock.now() + timeoutMs };
  }

  /** Read-only principals may send only what the reader knows to read; the rest is refused before anything runs. */
  private refuseForReadOnly(statements: readonly PlannedStatement[]): void {
    for (const [at, statement] of statements.entries()) {
      const reason = statement.analysis.readOnlyRefusal;
      if (reason === undefined) continue;
      throw new GatewayError("FORBIDDEN", `this principal may only read: ${reason} are refused`, {
        issues: [{ path: statements.length > 1 ? `statements.${at}.sql` : "sql", message: "not allowed for a read-only principal" }],
      });
    }
  }

  /**
   * Gateway-managed transactions and batches own BEGIN/COMMIT: SQL that begins or ends a transaction
   * itself — or, on MySQL, commits implicitly (DDL, LOCK TABLES...) — is refused there, unless the
   * surface lets it continue the transaction (SurfacePolicy.transactionEnds).
   */
  private refuseTransactionControl(statements: readonly PlannedStatement[], scope: "batch" | "transaction", ends: "refuse" | "continue"): void {
    const at = statements.findIndex(({ analysis }) => refusedIn(scope, ends, analysis));
    if (at < 0) return;
    const where = SCOPE_NAMES[scope];
    const path = scope === "batch" ? `statements.${at}.sql` : "sql";
    const analysis = (statements[at] as PlannedStatement).analysis;
    if (!analysis.understood) {
      throw new GatewayError("INVALID_REQUEST", `the gateway cannot read this statement (${analysis.readOnlyRefusal ?? "syntax"}), so it is not run in ${where}`, {
        issues: [{ path, message: "cannot be read" }],
      });
    }
    throw new GatewayError(
      "INVALID_REQUEST",
      `transaction control (BEGIN, COMMIT, ROLLBACK, XA, SET autocommit...) or a statement that commits implicitly (MySQL DDL, LOCK TABLES...) is not allowed in ${where}; the gateway begins and ends it, so run such SQL on its own`,
      { issues: [{ path, message: "begins or ends the transaction" }] },
    );
  }
}

/** Whether a statement is refused in a gateway transaction or batch (see SurfacePolicy.transactionEnds). */
function refusedIn(scope: "batch" | "transaction", ends: "refuse" | "continue", analysis: StatementAnalysis): boolean {
  if (ends === "refuse") return analysis.endsTransaction;
  // What the reader cannot read goes to the database (as one statement), whose error is the answer.
  if (!analysis.understood) return false;
  return scope === "batch" && analysis.transactionControl;
}
