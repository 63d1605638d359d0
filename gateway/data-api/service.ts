/**
 * The RDS Data API operations on the gateway's own core: the same clusters, pools, executor and
 * transaction registry as the native API (no second pool, no second executor). By default it behaves
 * like the service — everything on the writer, results capped at 1 MiB, no array parameters, 45 s
 * statement timeout, transactions idle 3 minutes / at most 24 hours, concurrent calls on one
 * transaction queued in order — and extensions lift those limits per resource or per request.
 */
import type {
  BatchExecuteStatementRequest,
  BeginTransactionRequest,
  EndTransactionRequest,
  ExecuteStatementRequest,
  SqlParameter,
} from "../../schemas/data-api.js";
import type { AccessPolicy } from "../auth/access-policy.js";
import type { Caller } from "../auth/caller.js";
import type { Cluster } from "../clusters/cluster.js";
import type { DataApiExtension, GatewayConfig } from "../config/schema.js";
import { READ_WRITE_LOGIN } from "../credentials/logins.js";
import type { DataApiDialect } from "../engines/data-api-dialect.js";
import type { StatementResult } from "../engines/engine.js";
import type { SurfacePolicy } from "../execution/plan.js";
import type { RunAs } from "../execution/run-as.js";
import { checkParamCount } from "../execution/run-options.js";
import { serializeTraced } from "../tracing/serialize-span.js";
import { bindStatement } from "./bind.js";
import { DataApiRefusal } from "./errors.js";
import { columnMetadataText, formattedRecordsText, recordsText } from "./records.js";
import type { DataApiTargets } from "./targets.js";

const QUEUE = { queue: true } as const;
/** Statements of a Data API transaction: queued in order, and MySQL DDL runs as the service runs it. */

/** Filled in with the cluster and intent of the work, for the request's metrics. */
export interface WorkNote {
  cluster: string;
  intent: string;
}

const NO_NOTE: WorkNote = { cluster: "", intent: "" };

/** An answer's JSON, and whether it is a keyed write's recorded answer sent again (nothing ran). */
export interface DataApiAnswer {
  json: string;
  replayed: boolean;
}

const fresh = (json: string): DataApiAnswer => ({ json, replayed: false });

/** A resolved target as this caller may use it. */
interface Authorised {
  cluster: Cluster;
  extensions: ReadonlySet<DataApiExtension>;
  runAs: RunAs;
}

export class DataApiService {
  constructor(
    private readonly targets: DataApiTargets,
    private readonly config: GatewayConfig,
    private readonly policy: AccessPolicy,
  ) {}

  async execute(
    caller: Caller,
    request: ExecuteStatementRequest,
    requested: ReadonlySet<DataApiExtension>,
    note: WorkNote = { ...NO_NOTE },
    idempotencyKey?: string,
  ): Promise<DataApiAnswer> {
    const target = this.resolve(caller, request, note);
    const extensions = union(target.extensions, requested);
    const dialect = target.cluster.engine.dataApi;
    checkParamCount(this.config, request.parameters?.length ?? 0);
    const bound = bindStatement(request.sql, request.parameters ?? [], dialect, extensions.has("array-parameters"));
    const scope = request.transactionId === undefined ? "statement" : "transaction";
    const answer = (results: readonly StatementResult[]) => {
      const json = this.executeResponse(dialect, results[0] as StatementResult, request);
      if (!extensions.has("large-results") && Buffer.byteLength(json) > this.config.dataApi.maxResponseBytes) {
        throw new DataApiRefusal("UnsupportedResultException", `The result exceeds the size limit of ${this.config.dataApi.maxResponseBytes} bytes`);
      }
      return json;
    };
    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, surface: "data-api", shape: answerShape(request), answer };
    const plan = target.cluster.pipeline.plan(
      { statements: [bound], scope, timeoutMs: this.timeoutMs(target.runAs), bigNumbers: "string", idempotency },
      this.surface(extensions),
      target.runAs,
    );
    if (scope === "statement") note.intent = plan.intent;
    const { value } = await target.cluster.pipeline.run(plan, request.transactionId, QUEUE);
    return value.recorded === undefined ? fresh(serializeTraced(answer, value.value)) : { json: value.recorded.answer, replayed: value.recorded.replayed };
  }

  async batchExecute(
    caller: Caller,
    request: BatchExecuteStatementRequest,
    requested: ReadonlySet<DataApiExtension>,
    note: WorkNote = { ...NO_NOTE },
    idempotencyKey?: string,
  ): Promise<DataApiAnswer> {
    const target = this.resolve(caller, request, note);
    const extensions = union(target.extensions, requested);
    const sets = request.parameterSets ?? [];
    for (const set of sets) checkParamCount(this.config, set.length);
    if (sets.length === 0) return fresh('{"updateResults":[]}');
    const dialect = target.cluster.engine.dataApi;
    const statements = sets.map((set: SqlParameter[]) => bindStatement(request.sql, set, dialect, extensions.has("array-parameters")));
    // Outside a transaction: one implicit transaction, all parameter sets or none. Inside one: one turn
    // on it for every set, so nothing else of it (a COMMIT...) runs in between.
    const scope = request.transactionId === undefined ? "batch" : "transaction";
    const answer = (results: readonly StatementResult[]) => `{"updateResults":[${results.map((result) => `{"generatedFields":${generatedFields(result)}}`).join(",")}]}`;
    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, surface: "data-api", answer };
    const plan = target.cluster.pipeline.plan(
      { statements, scope, timeoutMs: this.timeoutMs(target.runAs), bigNumbers: "string", idempotency },
      this.surface(extensions),
      target.runAs,
    );
    const { value } = await target.cluster.pipeline.run(plan, request.transactionId, QUEUE);
    return value.recorded === undefined ? fresh(serializeTraced(answer, value.value)) : { json: value.recorded.answer, replayed: value.recorded.replayed };
  }

  async begin(caller: Caller, request: BeginTransactionRequest, note: WorkNote = { ...NO_NOTE }): Promise<string> {
    const target = this.resolve(caller, request, note);
    const { id } = await target.cluster.transactions.begin(
      {},
      { idleTimeoutMs: this.config.dataApi.transactionIdleTimeoutMs, maxAgeMs: this.config.dataApi.transactionMaxAgeMs },
      target.runAs,
    );
    return JSON.stringify({ transactionId: id });
  }

  async commit(caller: Caller, request: EndTransactionRequest, note: WorkNote = { ...NO_NOTE }, idempotencyKey?: string): Promise<DataApiAnswer> {
    const target = this.resolve(caller, request, note);
    const answer = '{"transactionStatus":"Transaction Committed"}';
    const key = idempotencyKey === undefined ? undefined : { key: idempotencyKey, surface: "data-api", answer };
    const { recorded } = await target.cluster.transactions.commit(request.transactionId, QUEUE, target.runAs, key);
    return { json: answer, replayed: recorded?.replayed ?? false };
  }

  async rollback(caller: Caller, request: EndTransactionRequest, note: WorkNote = { ...NO_NOTE }): Promise<string> {
    const target = this.resolve(caller, request, note);
    await target.cluster.transactions.rollback(request.transactionId, QUEUE, target.runAs);
    return '{"transactionStatus":"Rollback Complete"}';
  }

  /** The resource's cluster, if the caller's principal has access to it. */
  private resolve(caller: Caller, request: { resourceArn: string; secretArn: string; schema?: string | undefined; sql?: string; transactionId?: string | undefined }, note: WorkNote): Authorised {
    if (request.schema !== undefined) throw new DataApiRefusal("ValidationException", "The schema parameter isn't supported");
    const target = this.targets.resolve(request.resourceArn, request.secretArn);
    note.cluster = target.clusterName;
    note.intent = "transaction"; // a statement outside a transaction is labelled by its plan
    const runAs = this.policy.runAs(caller, target.clusterName);
    // A secret's own user replaces the read-write login only: a read-only principal keeps the
    // read-only login, a principal with a login of its own keeps that.
    const login = target.login !== undefined && runAs.login === READ_WRITE_LOGIN ? target.login : runAs.login;
    return { cluster: target.cluster, extensions: target.extensions, runAs: login === runAs.login ? runAs : Object.assign({}, runAs, { login }) };
  }

  private timeoutMs(runAs: RunAs): number {
    return Math.min(this.config.dataApi.statementTimeoutMs, this.config.statements.maxTimeoutMs, runAs.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
  }

  /**
   * The service's rules (everything on the writer, no consistency token, results capped at 1 MiB,
   * implicit commits and SQL COMMIT/ROLLBACK run as the service runs them, text the gateway cannot
   * read answered by the database) unless the caller's extensions lift them.
   */
  private surface(extensions: ReadonlySet<DataApiExtension>): SurfacePolicy {
    return {
      primaryOnly: !extensions.has("read-replicas"),
      withoutToken: true,
      transactionEnds: "continue",
      ...(extensions.has("large-results") ? {} : { maxResultBytes: this.config.dataApi.maxResponseBytes }),
    };
  }

  private executeResponse(dialect: DataApiDialect, result: StatementResult, request: ExecuteStatementRequest): string {
    if (result.columns.length === 0) {
      return `{"generatedFields":${generatedFields(result)},"numberOfRecordsUpdated":${result.rowCount ?? 0}}`;
    }
    const options = request.resultSetOptions ?? {};
    if (request.formatRecordsAs === "JSON") {
      const names = result.columns.map((column) => column.name);
      if (new Set(names).size !== names.length) {
        // The statement has run (it may have written): an exception the clients do not retry.
        throw new DataApiRefusal("UnsupportedResultException", "The result contains more than one column with the same name; formatRecordsAs JSON needs unique names");
      }
      return `{"formattedRecords":${JSON.stringify(formattedRecordsText(dialect, result, options))},"numberOfRecordsUpdated":0}`;
    }
    const metadata = request.includeResultMetadata ? `"columnMetadata":${columnMetadataText(dialect, result)},` : "";
    return `{${metadata}"numberOfRecordsUpdated":0,"records":${recordsText(dialect, result, options)}}`;
  }
}

/** The request's options that shape its answer: part of a keyed request's fingerprint. */
function answerShape(request: ExecuteStatementRequest): Record<string, unknown> {
  return { includeResultMetadata: request.includeResultMetadata, formatRecordsAs: request.formatRecordsAs, resultSetOptions: request.resultSetOptions };
}

/** MySQL's AUTO_INCREMENT id of an INSERT, else nothing (PostgreSQL: use RETURNING). */
function generatedFields(result: StatementResult): string {
  return result.lastInsertId === undefined ? "[]" : `[{"longValue":${result.lastInsertId}}]`;
}

function union<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): ReadonlySet<T> {
  return b.size === 0 ? a : new Set([...a, ...b]);
}
