/**
 * `@poolgate/client`: the TypeScript client of the Poolgate gateway, for Lambda functions and plain
 * Node, and the authentication hook for any RDS Data API client pointed at a gateway.
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
export {
  addPoolgateAuth,
  type AwsCredentials,
  type AwsCredentialsProvider,
  type BuildStepOptions,
  type IamAuth,
  iamAuth,
  type IamAuthOptions,
  POOLGATE_AUTH_HEADER,
  type SdkClientLike,
} from "./iam-auth.js";
export type { RetryPolicy } from "./retry.js";
export type { OutgoingRequest, RequestSigner } from "./transport.js";
export { asAwsSdkV2, type AwsSdkV2Namespace, type DataApiClientLike, type HttpHandlerLike, poolgateRequestHandler, type PoolgateRequestHandlerOptions } from "./data-api-auth.js";
export type { CacheOutcome, Column, DatabaseErrorInfo, ErrorCode, Intent, Isolation, Param, StreamEnd } from "./wire.js";
export { addIdempotencyKeys, DATA_API_IDEMPOTENCY_HEADER, type IdempotencyKeyOptions, type IdempotencyStepOptions, type SdkClientWithContext } from "./data-api-idempotency.js";
