/**
 * The Poolgate client: typed queries, atomic batches and transactions over HTTP keep-alive, with the
 * consistency token of a write carried to later reads automatically, deadlines honoured end to end
 * (the gateway's statement timeout never outlives the caller), and retries only where the gateway says
 * they are safe.
 */
import type { BatchResponse, BeginResponse, CacheOutcome, Column, EndTransactionResponse, Intent, Isolation, Param, QueryResponse, StreamEnd } from "./wire.js";
import { DeadlineExceededError, PoolgateError, TransportError } from "./errors.js";
import { NdjsonResult } from "./row-stream.js";
import { type RetryPolicy, withRetries } from "./retry.js";
import { type FetchLike, type RequestSigner, type TransactionAffinity, Transport } from "./transport.js";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The gateway's base URL, e.g. `http://poolgate.internal:8080`. */
  url: string;
  /** Cluster for every call (default: the gateway's default cluster). */
  cluster?: string;
  /** Statement timeout for each call, in ms, unless a call says otherwise (default: the gateway's). */
  timeoutMs?: number;
  /**
   * The overall deadline: a function returning the ms left (pass `context.getRemainingTimeInMillis`
   * in Lambda) or an absolute epoch-ms time. Every call, retries included, ends before it.
   */
  deadline?: (() => number) | number;
  /** Kept back from the deadline for the caller's own work after the last call, in ms (default 50). */
  deadlineMarginMs?: number;
  /** Retries of failures the gateway marks retryable (default: 3 attempts, 50 ms base, 1 s cap, full jitter). */
  retry?: Partial<RetryPolicy>;
  /** Adds headers to each request (caller authentication, e.g. an IAM identity proof). */
  sign?: RequestSigner;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /**
   * How requests are sent (default: the platform's global `fetch`, whose connections Node, Bun and
   * Deno keep alive between requests). Pass your own to send through a proxy, or undici's `fetch`
   * bound to an `Agent` of your choosing (pool size, keep-alive times) in Node.
   */
  fetch?: FetchLike;
  /**
   * How JSON is read and written (default: the platform's `JSON`). JSON.parse turns numbers beyond a
   * double's precision (int8 ids inside a jsonb document) into the nearest double; the gateway sends
   * every digit, so pass a lossless codec (for example lossless-json's `{ parse, stringify }`) to keep
   * them through a read-modify-write.
   */
  json?: JsonCodec;
  /**
   * The largest statement timeout the gateway accepts (its `statements.maxTimeoutMs`, default 300000):
   * a long deadline is never turned into a timeout the gateway would refuse.
   */
  maxStatementTimeoutMs?: number;
  /**
   * Send an idempotency key (a random UUID) with every write — a query not marked `intent: "read"`,
   * every batch that is not `readOnly`, every commit — and the same key on each of the client's own
   * retries, so that a write whose answer was lost (OUTCOME_UNKNOWN, a dropped connection) is sent
   * again safely: the gateway answers it from its record if it was applied (default true).
   */
  idempotency?: boolean;
  /**
   * Send the current trace context with every request, so that the gateway's spans join the caller's
   * trace: the active OpenTelemetry span as `traceparent`/`tracestate` when `@opentelemetry/api` is
   * installed, else the Lambda's `_X_AMZN_TRACE_ID` as `X-Amzn-Trace-Id` (default true).
   */
  traceContext?: boolean;
}

/** Per-call options. */
export interface CallOptions {
  /** Statement timeout for this call, in ms. */
  timeoutMs?: number;
  /** Where to run: a replica (read) or the primary (write); default: inferred by the gateway. */
  intent?: Intent;
  /** Run only where this earlier write is visible (default: the client's latest token). */
  consistencyToken?: string | null;
  /** Largest replica lag acceptable for this read, in ms. */
  maxStalenessMs?: number;
  /** int8/numeric/BIGINT/DECIMAL as exact strings (default) or numbers. */
  bigNumbers?: "string" | "number";
  /**
   * This write's idempotency key (a batch's; a transaction's commit's): your own (to send the same
   * write again from a later invocation and get its first answer), or `false` for none (default: a
   * new UUID per call unless `ClientOptions.idempotency` is false). A key the client made itself is
   * dropped for SQL the gateway cannot make exactly-once (SQL with its own COMMIT, MySQL DDL); a key
   * you pass is refused there (INVALID_REQUEST).
   */
  idempotencyKey?: string | false;
}

/** Options of {@link PoolgateClient.query} outside a transaction. */
export interface QueryOptions extends CallOptions {
  /**
   * Serve this read from the gateway's result cache: an answer younger than `ttlMs` that no write
   * through the gateway has invalidated since, read at or after the call's consistency token. Writes
   * made outside the gateway show after at most `ttlMs`. `staleWhileRevalidateMs` (default 0): how
   * long after `ttlMs` a still-valid answer may be served while the gateway refreshes it. Statements
   * the gateway does not know to be deterministic reads run as usual (`cache: "bypass"`).
   */
  cache?: { ttlMs: number; staleWhileRevalidateMs?: number };
}

/** A statement's result with rows typed as `Row`. */
export interface QueryResult<Row> {
  rows: Row[];
  columns: Column[];
  /** Rows returned or affected. */
  rowCount: number | null;
  /** SELECT, INSERT... */
  command: string;
  /** The write was not run by this call: the answer is the one recorded under its idempotency key. */
  replayed?: true;
  /** MySQL: the generated AUTO_INCREMENT value, as an exact string. */
  lastInsertId?: string;
  /** How many times the gateway ran it (for a batch: the whole batch); 0 when answered from the cache. */
  attempts: number;
  /** When the call asked for the cache: hit, stale (served while refreshed), miss or bypass. */
  cache?: CacheOutcome;
  /**
   * After a write: where it is visible (a WAL position or GTID), to send as `consistencyToken` on a
   * later read, also from another client. For a batch, every result carries the token of the batch's
   * COMMIT; inside a transaction there is none (nothing is committed yet): the commit's token goes to
   * `client.consistencyToken`. Undefined after reads, and where the database gives no position.
   */
  consistencyToken?: string;
}

/** Options of {@link PoolgateClient.stream} (a stream's answer is never recorded: no idempotency key). */
export interface StreamOptions extends Omit<CallOptions, "idempotencyKey"> {
  /** Rows as objects keyed by column name (default) or as arrays in column order. */
  rowMode?: "object" | "array";
}

/**
 * A streamed result: iterate it (once) with `for await`; rows arrive as the gateway reads them from
 * the database, and the database is read only as fast as the loop takes them. Breaking out of the loop
 * (or throwing in it) aborts the request: the gateway cancels the statement and frees its session at
 * once. A statement that fails after some rows were handed over throws its error from the loop.
 */
export interface RowStream<Row> extends AsyncIterable<Row> {
  /**
   * The result's columns, from the stream's first line: resolves before the first row is consumed,
   * whether or not the stream is iterated (rejects with the stream's error if it fails before them).
   * The statement is sent by the first of reading `columns` and starting the loop.
   */
  readonly columns: Promise<Column[]>;
  /** How the stream ended (command, rowCount, attempts); set once the loop has run to the end. */
  readonly end: StreamEnd | undefined;
  /**
   * Stops the stream without iterating it to the end (after awaiting `columns`, say): the request is
   * aborted and the gateway frees the session at once. Breaking out of the loop does the same.
   */
  cancel(): Promise<void>;
}

/** One statement of a {@link PoolgateClient.batch}. */
export interface BatchStatement {
  sql: string;
  params?: Param[];
}

/** Options of {@link PoolgateClient.transaction} and {@link PoolgateClient.batch}. */
export interface TransactionOptions extends Omit<CallOptions, "intent"> {
  isolation?: Isolation;
  /** READ ONLY, on a replica when one is fresh enough. */
  readOnly?: boolean;
}

/** The handle a transaction callback gets: statements run one at a time on the transaction's connection. */
export interface Transaction {
  readonly id: string;
  /** Runs one statement inside the transaction. */
  query<Row = Record<string, unknown>>(sql: string, params?: Param[], options?: Pick<CallOptions, "timeoutMs" | "bigNumbers">): Promise<QueryResult<Row>>;
}

/** The client. Create one per process (per Lambda execution environment) and reuse it. */
export interface PoolgateClient {
  /** Runs one statement (`$1`… on PostgreSQL, `?` on MySQL). */
  query<Row = Record<string, unknown>>(sql: string, params?: Param[], options?: QueryOptions): Promise<QueryResult<Row>>;
  /**
   * Runs one statement and streams its rows (POST /v1/query/stream): a result of any size, with the
   * gateway's memory and the database's pace set by the loop. The statement timeout bounds each wait
   * for the database (not the whole stream); the client's deadline bounds the whole stream. Not retried
   * once rows have arrived.
   */
  stream<Row = Record<string, unknown>>(sql: string, params?: Param[], options?: StreamOptions): RowStream<Row>;
  /**
   * Runs the statements atomically (one transaction, all or none); retried as a whole when safe.
   * Resolves one result per statement, in order; each carries the batch's `attempts` and the
   * consistency token of its COMMIT (also stored in `consistencyToken`).
   */
  batch(statements: BatchStatement[], options?: TransactionOptions): Promise<QueryResult<Record<string, unknown>>[]>;
  /**
   * Runs `work` in a transaction: committed when it resolves, rolled back when it throws. Resolves
   * what `work` resolved, once the COMMIT succeeded; the commit's consistency token is stored in
   * `consistencyToken` (statements inside the transaction carry none).
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * The consistency token of the latest write through this client, sent with later reads so they see
   * it. Pass it between invocations (set it back) to keep read-your-writes across them.
   */
  consistencyToken: string | undefined;
  /**
   * Kept for callers written for earlier versions: resolves at once. The connections are the
   * platform fetch's, shared by the process and closed by it when idle.
   */
  close(): Promise<void>;
}

/** Reads and writes JSON; see {@link ClientOptions.json}. */
export interface JsonCodec {
  parse(text: string): unknown;
  stringify(value: unknown): string;
}

/** The client's rows as typed objects (the gateway answers rows as objects by default). */
function asResult<Row>(
  response: Omit<QueryResponse, "attempts" | "consistencyToken" | "replayed">,
  attempts: number,
  consistencyToken: string | undefined,
  replayed?: true,
): QueryResult<Row> {
  // Optional fields are added, not spread in: a property after a spread takes V8's slow path.
  const result: QueryResult<Row> = { rows: response.rows as Row[], columns: response.columns, rowCount: response.rowCount, command: response.command, attempts };
  if (response.lastInsertId !== undefined) result.lastInsertId = response.lastInsertId;
  if (consistencyToken !== undefined) result.consistencyToken = consistencyToken;
  if (replayed) result.replayed = replayed;
  return result;
}

/** The gateway refused an idempotency key for SQL it cannot make exactly-once (nothing ran). */
function refusesKey(err: unknown): boolean {
  return err instanceof PoolgateError && err.code === "INVALID_REQUEST" && (err.issues ?? []).some((issue) => issue.path === "idempotencyKey");
}

/** Creates a client; see {@link ClientOptions}. */
export function createClient(options: ClientOptions): PoolgateClient {
  const transport = new Transport({
    url: options.url,
    headers: options.headers ?? {},
    sign: options.sign,
    // Called as a plain function: fetch called as a method of another object throws in Deno and browsers.
    fetch: options.fetch ?? ((url, init) => fetch(url, init as RequestInit)),
    json: options.json ?? JSON,
    traceContext: options.traceContext ?? true,
  });
  const margin = options.deadlineMarginMs ?? 50;
  const json = options.json ?? JSON;
  const cluster = options.cluster === undefined ? {} : { cluster: options.cluster };

  /** One statement's request body as /v1/query and /v1/query/stream both take it. */
  const statementBody = (sql: string, params: Param[], call: Omit<CallOptions, "idempotencyKey">, token: string | undefined, timeoutMs: number | undefined) => ({
    sql,
    params,
    ...cluster,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(call.intent ? { intent: call.intent } : {}),
    ...(token ? { consistencyToken: token } : {}),
    ...(call.maxStalenessMs === undefined ? {} : { maxStalenessMs: call.maxStalenessMs }),
    ...(call.bigNumbers ? { bigNumbers: call.bigNumbers } : {}),
  });

  /** The absolute time by which a call must be answered, or undefined without a deadline. */
  const deadlineAt = (): number | undefined => {
    if (options.deadline === undefined) return undefined;
    const end = typeof options.deadline === "function" ? Date.now() + options.deadline() : options.deadline;
    return end - margin;
  };

  /** The statement timeout sent to the gateway: never past the deadline, so it cancels on the server first. */
  const timeoutFor = (callTimeoutMs: number | undefined, until: number | undefined): number | undefined => {
    const requested = callTimeoutMs ?? options.timeoutMs;
    if (until === undefined) return requested;
    const left = until - Date.now();
    if (left <= 1) throw new DeadlineExceededError("the deadline passed before the request was sent", false);
    // The gateway cancels first and its answer still has time to travel back before the client gives up.
    const serverSide = Math.min(Math.max(1, Math.floor(left > 200 ? left - 100 : left / 2)), options.maxStatementTimeoutMs ?? 300_000);
    return requested === undefined ? serverSide : Math.min(requested, serverSide);
  };

  /** The key a write is sent with (the same on every retry of the call), or undefined for none. */
  const keyFor = (write: boolean, callKey: string | false | undefined): string | undefined => {
    if (callKey === false || !write) return undefined;
    return callKey ?? (options.idempotency === false ? undefined : crypto.randomUUID());
  };
  const keyField = (key: string | undefined) => (key === undefined ? {} : { idempotencyKey: key });

  const client: PoolgateClient = {
    consistencyToken: undefined,

    async query<Row>(sql: string, params: Param[] = [], call: QueryOptions = {}): Promise<QueryResult<Row>> {
      const until = deadlineAt();
      const token = call.consistencyToken === null ? undefined : (call.consistencyToken ?? client.consistencyToken);
      const safeToResend = call.intent === "read";
      const send = async (key: string | undefined) => {
        const response = await withRetries(
          options.retry,
          until,
          safeToResend,
          () => {
            const timeoutMs = timeoutFor(call.timeoutMs, until);
            const cache = call.cache === undefined ? {} : { cache: call.cache };
            return transport.post<QueryResponse>("/v1/query", { ...statementBody(sql, params, call, token, timeoutMs), ...keyField(key), ...cache }, until);
          },
          key !== undefined,
        );
        if (response.consistencyToken) client.consistencyToken = response.consistencyToken;
        const result = asResult<Row>(response, response.attempts, response.consistencyToken, response.replayed);
        if (response.cache !== undefined) result.cache = response.cache;
        return result;
      };
      const key = keyFor(!safeToResend, call.idempotencyKey);
      try {
        return await send(key);
      } catch (err) {
        // A key the client made, for SQL that commits by itself: nothing ran; sent as it is without keys.
        if (key === undefined || call.idempotencyKey !== undefined || !refusesKey(err)) throw err;
        return send(undefined);
      }
    },

    stream<Row>(sql: string, params: Param[] = [], call: StreamOptions = {}): RowStream<Row> {
      const until = deadlineAt();
      const token = call.consistencyToken === null ? undefined : (call.consistencyToken ?? client.consistencyToken);
      const aborter = new AbortController();
      let opened: Promise<NdjsonResult<Row>> | undefined;
      let columns: Promise<Column[]> | undefined;
      let iterated = false;
      let complete = false;

      /** Sends the statement (once: the first of `columns` and the loop does) and reads up to the header. */
      const open = (): Promise<NdjsonResult<Row>> => {
        opened ??= (async () => {
          // Retried (when the gateway says so) only until the stream opens: no row has arrived then.
          const body = await withRetries(options.retry, until, call.intent === "read", () => {
            const timeoutMs = timeoutFor(call.timeoutMs, until);
            const payload = { ...statementBody(sql, params, call, token, timeoutMs), ...(call.rowMode ? { rowMode: call.rowMode } : {}) };
            return transport.open("/v1/query/stream", payload, until, aborter.signal);
          });
          const result = new NdjsonResult<Row>(body, (text) => json.parse(text));
          await result.header();
          return result;
        })().catch((err: unknown) => {
          aborter.abort();
          throw streamFailure(err, until);
        });
        return opened;
      };

      async function* rows(): AsyncGenerator<Row> {
        try {
          const result = await open();
          try {
            yield* result.rows();
          } finally {
            stream.end = result.end;
          }
          complete = true;
        } catch (err) {
          throw streamFailure(err, until);
        } finally {
          // Left early (break, throw, or a failure): the gateway sees the connection go and frees the session.
          if (!complete) aborter.abort();
        }
      }

      const stream: RowStream<Row> & { end: StreamEnd | undefined } = {
        get columns() {
          columns ??= open().then((result) => result.header());
          // Never an unhandled rejection for a caller who reads the property and only iterates.
          columns.catch(() => undefined);
          return columns;
        },
        end: undefined,
        async cancel() {
          if (complete) return;
          aborter.abort();
          const result = await opened?.catch(() => undefined);
          await result?.close().catch(() => undefined);
        },
        [Symbol.asyncIterator]: () => {
          if (iterated) throw new Error("a RowStream can be iterated once; call stream() again to run the statement again");
          iterated = true;
          return rows();
        },
      };
      return stream;
    },

    async batch(statements: BatchStatement[], call: TransactionOptions = {}) {
      const until = deadlineAt();
      const token = call.consistencyToken === null ? undefined : (call.consistencyToken ?? client.consistencyToken);
      const key = keyFor(call.readOnly !== true, call.idempotencyKey);
      const response = await withRetries(options.retry, until, call.readOnly === true, () => {
        const timeoutMs = timeoutFor(call.timeoutMs, until);
        return transport.post<BatchResponse>(
          "/v1/batch",
          {
            statements,
            ...cluster,
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
            ...(call.isolation ? { isolation: call.isolation } : {}),
            ...(call.readOnly ? { readOnly: true } : {}),
            ...(call.readOnly && token ? { consistencyToken: token } : {}),
            ...(call.bigNumbers ? { bigNumbers: call.bigNumbers } : {}),
            ...keyField(key),
          },
          until,
        );
      }, key !== undefined);
      if (response.consistencyToken) client.consistencyToken = response.consistencyToken;
      return response.results.map((result) => asResult<Record<string, unknown>>(result, response.attempts, response.consistencyToken, response.replayed));
    },

    async transaction<T>(work: (tx: Transaction) => Promise<T>, call: TransactionOptions = {}): Promise<T> {
      const until = deadlineAt();
      const token = call.consistencyToken === null ? undefined : (call.consistencyToken ?? client.consistencyToken);
      // The load balancer's stickiness cookies, if it sets any, for this transaction's calls alone.
      const affinity: TransactionAffinity = {};
      // BEGIN applies nothing, so it may be sent again.
      const begun = await withRetries(options.retry, until, true, () =>
        transport.post<BeginResponse>(
          "/v1/transactions",
          {
            ...cluster,
            ...(call.isolation ? { isolation: call.isolation } : {}),
            ...(call.readOnly ? { readOnly: true } : {}),
            ...(call.readOnly && token ? { consistencyToken: token } : {}),
          },
          until,
          affinity,
        ),
      );
      const id = begun.transactionId;
      const tx: Transaction = {
        id,
        async query<Row>(sql: string, params: Param[] = [], statement: Pick<CallOptions, "timeoutMs" | "bigNumbers"> = {}) {
          const timeoutMs = timeoutFor(statement.timeoutMs ?? call.timeoutMs, until);
          const response = await transport.post<QueryResponse>(
            "/v1/query",
            {
              sql,
              params,
              transactionId: id,
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
              ...((statement.bigNumbers ?? call.bigNumbers) ? { bigNumbers: statement.bigNumbers ?? call.bigNumbers } : {}),
            },
            until,
            affinity,
          );
          return asResult<Row>(response, 1, undefined);
        },
      };
      let value: T;
      try {
        value = await work(tx);
      } catch (err) {
        // Best effort and brief: the gateway also rolls back an abandoned transaction after its idle
        // timeout, and the caller is waiting for the original error.
        const rollbackBy = Math.min(until ?? Number.POSITIVE_INFINITY, Date.now() + 2000);
        await transport.post(`/v1/transactions/${encodeURIComponent(id)}/rollback`, {}, rollbackBy, affinity).catch(() => undefined);
        throw err;
      }
      // Under a key, a commit whose answer was lost is sent again: the gateway settles it from its record.
      const key = keyFor(call.readOnly !== true, call.idempotencyKey);
      const commit = () => transport.post<EndTransactionResponse>(`/v1/transactions/${encodeURIComponent(id)}/commit`, keyField(key), until, affinity);
      const ended = key === undefined ? await commit() : await withRetries(options.retry, until, false, commit, true);
      if (ended.consistencyToken) client.consistencyToken = ended.consistencyToken;
      return value;
    },

    close: () => Promise.resolve(),
  };
  return client;
}

/** A failure while a stream's body was read: the gateway's error as it is, else the deadline or the transport. */
function streamFailure(err: unknown, until: number | undefined): unknown {
  if (err instanceof PoolgateError || err instanceof DeadlineExceededError || err instanceof TransportError) return err;
  if (until !== undefined && Date.now() >= until) return new DeadlineExceededError("the deadline passed while the stream was read", true);
  return new TransportError(`the stream was cut before its end: ${err instanceof Error ? err.message : String(err)}`, undefined, false, err);
}
