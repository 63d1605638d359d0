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
import type { ExecuteOptions, StatementResult } from "../engines/engine.js";
import type { ExecutionPolicy } from "../execution/executor.js";
import type { RunAs } from "../execution/run-as.js";
import { checkParamCount, executeOptions } from "../execution/run-options.js";
import { type BoundStatement, bindStatement } from "./bind.js";
import { DataApiRefusal } from "./errors.js";
import { columnMetadataText, formattedRecordsText, recordsText } from "./records.js";
import type { DataApiTargets } from "./targets.js";

const QUEUE = { queue: true } as const;
/** Statements of a Data API transaction: queued in order, and MySQL DDL runs as the service runs it. */
const IN_TRANSACTION = { queue: true, implicitCommits: "allow" } as const;

/** Filled in with the cluster and intent of the work, for the request's metrics. */
export interface WorkNote {
  cluster: string;
  intent: string;
}

const NO_NOTE: WorkNote = { cluster: "", intent: "" };

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

  async execute(caller: Caller, request: ExecuteStatementRequest, requested: ReadonlySet<DataApiExtension>, note: WorkNote = { ...NO_NOTE }): Promise<string> {
    const target = this.resolve(caller, request, note);
    const extensions = union(target.extensions, requested);
    const dialect = target.cluster.engine.dataApi;
    checkParamCount(this.config, request.parameters?.length ?? 0);
    const bound = bindStatement(request.sql, request.parameters ?? [], dialect, extensions.has("array-parameters"));
    const result = await this.run(target, bound, request.transactionId, extensions);
    const json = this.executeResponse(dialect, result, request);
    if (!extensions.has("large-results") && Buffer.byteLength(json) > this.config.dataApi.maxResponseBytes) {
      throw new DataApiRefusal("UnsupportedResultException", `The result exceeds the size limit of ${this.config.dataApi.maxResponseBytes} bytes`);
    }
    return json;
  }

  async batchExecute(caller: Caller, request: BatchExecuteStatementRequest, requested: ReadonlySet<DataApiExtension>, note: WorkNote = { ...NO_NOTE }): Promise<string> {
    const target = this.resolve(caller, request, note);
    const extensions = union(target.extensions, requested);
    const sets = request.parameterSets ?? [];
    for (const set of sets) checkParamCount(this.config, set.length);
    if (sets.length === 0) return '{"updateResults":[]}';
    const dialect = target.cluster.engine.dataApi;
    const statements = sets.map((set: SqlParameter[]) => bindStatement(request.sql, set, dialect, extensions.has("array-parameters")));
    let results: StatementResult[];
    if (request.transactionId !== undefined) {
      // One turn on the transaction for every set: nothing else of it (a COMMIT...) runs in between.
      const options = this.transactionOptions(extensions, target.runAs);
      results = await target.cluster.transactions.run(request.transactionId, statements, options, IN_TRANSACTION, target.runAs);
    } else {
      // One implicit transaction: all parameter sets or none.
      const { value } = await target.cluster.executor.batch(
        { statements: statements.map((statement) => ({ sql: statement.sql, params: statement.params })), timeoutMs: this.timeoutMs(target.runAs), bigNumbers: "string" },
        this.executionPolicy(extensions),
        target.runAs,
      );
      results = value.value;
    }
    return `{"updateResults":[${results.map((result) => `{"generatedFields":${generatedFields(result)}}`).join(",")}]}`;
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

  async commit(caller: Caller, request: EndTransactionRequest, note: WorkNote = { ...NO_NOTE }): Promise<string> {
    const target = this.resolve(caller, request, note);
    await target.cluster.transactions.commit(request.transactionId, QUEUE, target.runAs);
    return '{"transactionStatus":"Transaction Committed"}';
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
    note.intent = request.sql === undefined || request.transactionId !== undefined ? "transaction" : target.cluster.executor.intentOf(request.sql);
    const runAs = this.policy.runAs(caller, target.clusterName);
    // A secret's own user replaces the read-write login only: a read-only principal keeps the
    // read-only login, a principal with a login of its own keeps that.
    const login = target.login !== undefined && runAs.login === READ_WRITE_LOGIN ? target.login : runAs.login;
    return { cluster: target.cluster, extensions: target.extensions, runAs: login === runAs.login ? runAs : { ...runAs, login } };
  }

  private timeoutMs(runAs: RunAs): number {
    return Math.min(this.config.dataApi.statementTimeoutMs, this.config.statements.maxTimeoutMs, runAs.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
  }

  private executionPolicy(extensions: ReadonlySet<DataApiExtension>): ExecutionPolicy {
    return {
      primaryOnly: !extensions.has("read-replicas"),
      withoutToken: true,
      ...(extensions.has("large-results") ? {} : { maxResultBytes: this.config.dataApi.maxResponseBytes }),
    };
  }

  /** One statement: on the transaction's connection (queued behind a running one), or on its own. */
  private async run(target: Authorised, bound: BoundStatement, transactionId: string | undefined, extensions: ReadonlySet<DataApiExtension>): Promise<StatementResult> {
    if (transactionId === undefined) {
      const { value } = await target.cluster.executor.query(
        { sql: bound.sql, params: bound.params, timeoutMs: this.timeoutMs(target.runAs), bigNumbers: "string" },
        this.executionPolicy(extensions),
        target.runAs,
      );
      return value.value;
    }
    const options = this.transactionOptions(extensions, target.runAs);
    const [result] = await target.cluster.transactions.run(transactionId, [bound], options, IN_TRANSACTION, target.runAs);
    return result as StatementResult;
  }

  private transactionOptions(extensions: ReadonlySet<DataApiExtension>, runAs: RunAs): ExecuteOptions {
    const options = executeOptions(this.config, { timeoutMs: this.timeoutMs(runAs), bigNumbers: "string" }, runAs);
    return extensions.has("large-results") ? options : { ...options, maxResultBytes: Math.min(options.maxResultBytes, this.config.dataApi.maxResponseBytes) };
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


/** MySQL's AUTO_INCREMENT id of an INSERT, else nothing (PostgreSQL: use RETURNING). */
function generatedFields(result: StatementResult): string {
  return result.lastInsertId === undefined ? "[]" : `[{"longValue":${result.lastInsertId}}]`;
}

function union<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): ReadonlySet<T> {
  return b.size === 0 ? a : new Set([...a, ...b]);
}
