/**
 * `@poolgate/client/data-api`: for RDS Data API callers (the AWS SDK and the ORMs on it) pointed at a
 * gateway: authentication through the SDK's request handler, SDK v2 shapes for v2-era wrappers, and
 * idempotency keys on every write. The default request handler needs the optional peer dependency
 * `@smithy/node-http-handler`.
 */
export { asAwsSdkV2, type AwsSdkV2Namespace, type DataApiClientLike, type HttpHandlerLike, poolgateRequestHandler, type PoolgateRequestHandlerOptions } from "./data-api-auth.js";
export { addIdempotencyKeys, DATA_API_IDEMPOTENCY_HEADER, type IdempotencyKeyOptions, type IdempotencyStepOptions, type SdkClientWithContext } from "./data-api-idempotency.js";
