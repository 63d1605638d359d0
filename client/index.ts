/**
 * `@poolgate/client`: the TypeScript client of the Poolgate gateway, for Lambda functions, plain Node,
 * Bun, Deno and edge runtimes. The platform's `fetch` only: no runtime dependencies. IAM identity
 * proofs are in `@poolgate/client/iam`, the RDS Data API helpers in `@poolgate/client/data-api`, so a
 * caller with a bearer token loads neither.
 */
export {
  type BatchStatement,
  type CallOptions,
  type ClientOptions,
  createClient,
  type JsonCodec,
  type PoolgateClient,
  type QueryOptions,
  type QueryResult,
  type RowStream,
  type StreamOptions,
  type Transaction,
  type TransactionOptions,
} from "./client.js";
export { DatabaseError, DeadlineExceededError, OutcomeUnknownError, PoolgateError, StatementTimeoutError, TransportError } from "./errors.js";
export type { RetryPolicy } from "./retry.js";
export type { AbortSignalLike, FetchLike, FetchResponseLike, OutgoingRequest, RequestSigner, ResponseBodyLike } from "./transport.js";
export type { CacheOutcome, Column, DatabaseErrorInfo, ErrorCode, Intent, Isolation, Param, StreamEnd } from "./wire.js";
