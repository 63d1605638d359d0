/**
 * `poolgate/client`: the TypeScript client of the Poolgate gateway, for Lambda functions and plain
 * Node. Wire types come from the gateway's own schemas.
 */
export {
  type BatchStatement,
  type CallOptions,
  type ClientOptions,
  createClient,
  type PoolgateClient,
  type QueryResult,
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
export type { Column, Intent, Isolation, Param } from "../schemas/query.js";
