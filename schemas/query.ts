/**
 * Wire types of the native API (`/v1/...`). The gateway validates with these schemas, the client SDK
 * types against them and the OpenAPI document is generated from them.
 */
import { z } from "zod";

/**
 * A statement parameter. JSON null, booleans, numbers and strings bind as themselves (send int8 and
 * numeric as strings to keep precision); arrays bind as PostgreSQL arrays (MySQL: JSON text); other
 * objects bind as JSON, from the request's own text (every digit kept); `{"$json": "<JSON text>"}`
 * binds that text as it is; `{"$bytea": "<base64>"}` binds bytes.
 */
export const paramSchema = z.union([
  z.null(),
  z.boolean(),
  z.number(),
  z.string(),
  z.strictObject({ $bytea: z.base64() }),
  z.strictObject({ $json: z.string().describe("JSON text, bound as it is (json/jsonb/JSON)") }),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);
export type Param = z.infer<typeof paramSchema>;

/** How int8 and numeric values come back. `string` (default) never loses precision. */
export const bigNumbersSchema = z
  .enum(["string", "number"])
  .describe("int8 and numeric as exact strings (default) or as JSON numbers (may lose precision)");

/** Rows as objects keyed by column name (default) or as arrays in column order. */
export const rowModeSchema = z.enum(["object", "array"]);

const statementFields = {
  sql: z.string().min(1).describe("One SQL statement; parameters are $1, $2... on PostgreSQL and ? on MySQL"),
  params: z.array(paramSchema).max(65535).optional().describe("Positional parameters; default []"),
};

/** Options shared by every request that runs SQL. */
const runOptions = {
  cluster: z.string().min(1).optional().describe("Cluster name from the config; default: the default cluster"),
  timeoutMs: z.number().int().positive().optional().describe("Statement timeout; the statement is cancelled on the server when it expires"),
  bigNumbers: bigNumbersSchema.optional(),
  rowMode: rowModeSchema.optional(),
};

/** Read-your-writes and staleness bounds for work that may run on a replica. */
const freshnessOptions = {
  consistencyToken: z
    .string()
    .min(1)
    .optional()
    .describe("From an earlier write's response: run only where that write is visible (a caught-up replica, else the primary)"),
  maxStalenessMs: z.number().int().nonnegative().optional().describe("Largest replica lag acceptable for this read"),
};

/**
 * A caller's name for one write, so that sending it again (after a timeout, OUTCOME_UNKNOWN or a
 * failover) returns the first answer instead of applying it twice. Printable ASCII, 1 to 255
 * characters (a UUID is the usual choice); scoped to the caller's principal. Also accepted as the
 * `Idempotency-Key` header.
 */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
  .describe("Exactly-once: the write is recorded under this key with its answer; the same request again answers that (replayed: true), a different one is refused");

const idempotencyFields = { idempotencyKey: idempotencyKeySchema.optional() };

export const intentSchema = z.enum(["read", "write"]).describe("Where to run: a replica (read) or the primary (write)");
export type Intent = z.infer<typeof intentSchema>;

/**
 * Opt-in result cache for a read: answered from an entry younger than ttlMs that no write through the
 * gateway has invalidated and that was read at or after the request's consistencyToken; writes made
 * outside the gateway show after at most ttlMs. Statements the gateway does not know to be plain,
 * deterministic reads are run as usual (the answer says "bypass").
 */
export const cacheRequestSchema = z
  .strictObject({
    ttlMs: z.number().int().positive().describe("How long an answer may be served from the cache (capped by the cluster's cache.maxTtlMs)"),
    staleWhileRevalidateMs: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("After ttlMs, how long a still-valid entry may be served while one refresh runs (capped by cache.maxStaleWhileRevalidateMs); default 0"),
  })
  .describe("Serve this read from the result cache when an entry allows it");
export type CacheRequest = z.infer<typeof cacheRequestSchema>;

/** How a read that asked for the cache was answered. */
export const cacheOutcomeSchema = z
  .enum(["hit", "miss", "stale", "bypass"])
  .describe("hit: from the cache; stale: from the cache within staleWhileRevalidateMs while it is refreshed; miss: run and kept; bypass: run, not cacheable (or the cache unavailable)");

export const queryRequestSchema = z.strictObject({
  ...statementFields,
  ...runOptions,
  ...freshnessOptions,
  intent: intentSchema.optional().describe("Overrides the intent inferred from the statement"),
  transactionId: z.string().min(1).optional().describe("Run inside this open interactive transaction"),
  ...idempotencyFields,
  cache: cacheRequestSchema.optional(),
});
export type QueryRequest = z.infer<typeof queryRequestSchema>;

/**
 * POST /v1/query/stream: one autocommit statement whose rows are sent as they arrive (NDJSON), with
 * the same options as /v1/query except transactionId (a stream runs on its own session).
 */
/** A stream's answer is never recorded: an idempotency key is refused there (INVALID_REQUEST), not silently ignored. */
export const streamRequestSchema = queryRequestSchema.omit({ transactionId: true, idempotencyKey: true, cache: true });
export type StreamRequest = z.infer<typeof streamRequestSchema>;

export const isolationSchema = z.enum(["read committed", "repeatable read", "serializable"]);
export type Isolation = z.infer<typeof isolationSchema>;

export const statementSchema = z.strictObject(statementFields);
export type Statement = z.infer<typeof statementSchema>;

export const batchRequestSchema = z.strictObject({
  statements: z.array(statementSchema).min(1).max(1000),
  ...runOptions,
  ...freshnessOptions,
  isolation: isolationSchema.optional(),
  readOnly: z.boolean().optional().describe("Runs READ ONLY, on a replica when one is fresh enough"),
  ...idempotencyFields,
});
export type BatchRequest = z.infer<typeof batchRequestSchema>;

export const columnSchema = z.object({
  name: z.string(),
  type: z.string().describe("Database type name, e.g. int4, text, timestamptz, _int4 for int4[] (PostgreSQL); bigint, varchar, datetime (MySQL)"),
});
export type Column = z.infer<typeof columnSchema>;

export const queryResultSchema = z.object({
  command: z.string().describe("SELECT, INSERT, UPDATE..."),
  columns: z.array(columnSchema),
  rows: z.array(z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())])),
  rowCount: z.number().int().nullable().describe("Rows returned or affected"),
  lastInsertId: z.string().optional().describe("MySQL: the AUTO_INCREMENT value the INSERT generated, as an exact string"),
});
export type QueryResult = z.infer<typeof queryResultSchema>;

const consistencyTokenField = z
  .string()
  .optional()
  .describe("After a write: pass it as consistencyToken on later reads to be sure to see this write");

const replayedField = z
  .literal(true)
  .optional()
  .describe("The answer recorded under the request's idempotencyKey, sent again: nothing ran this time");

export const queryResponseSchema = queryResultSchema.extend({
  attempts: z.number().int().describe("How many times the gateway ran the statement (retries + 1; 0 when answered from the cache)"),
  consistencyToken: consistencyTokenField,
  replayed: replayedField,
  cache: cacheOutcomeSchema.optional().describe("Set when the request asked for the cache (also the x-poolgate-cache header)"),
});
export type QueryResponse = z.infer<typeof queryResponseSchema>;

export const batchResponseSchema = z.object({
  results: z.array(queryResultSchema),
  attempts: z.number().int(),
  consistencyToken: consistencyTokenField,
  replayed: replayedField,
});
export type BatchResponse = z.infer<typeof batchResponseSchema>;

export const beginRequestSchema = z.strictObject({
  cluster: runOptions.cluster,
  isolation: isolationSchema.optional(),
  readOnly: z.boolean().optional().describe("READ ONLY, on a replica when one is fresh enough"),
  ...freshnessOptions,
});
export type BeginRequest = z.infer<typeof beginRequestSchema>;

export const beginResponseSchema = z.object({
  transactionId: z.string(),
  idleTimeoutMs: z.number().int().describe("Rolled back after this long without a statement"),
  expiresAt: z.string().describe("ISO-8601 time after which the gateway rolls it back regardless"),
});
export type BeginResponse = z.infer<typeof beginResponseSchema>;

/** The body of a commit (optional): the key that makes the COMMIT exactly-once. */
export const commitRequestSchema = z.strictObject({ ...idempotencyFields });
export type CommitRequest = z.infer<typeof commitRequestSchema>;

export const endTransactionResponseSchema = z.object({
  transactionId: z.string(),
  outcome: z.enum(["committed", "rolled back"]),
  consistencyToken: consistencyTokenField,
  replayed: replayedField,
});
export type EndTransactionResponse = z.infer<typeof endTransactionResponseSchema>;

/** The first line of a stream: the result's columns. */
export const streamHeaderSchema = z.object({ columns: z.array(columnSchema) });
export type StreamHeader = z.infer<typeof streamHeaderSchema>;

/** The last line of a stream that ended cleanly: every row was sent. */
export const streamEndSchema = z.object({
  command: z.string().describe("SELECT, INSERT..."),
  rowCount: z.number().int().nullable().describe("Rows sent (or affected)"),
  attempts: z.number().int().describe("How many times the gateway tried to open the stream (retries + 1)"),
});
export type StreamEnd = z.infer<typeof streamEndSchema>;
