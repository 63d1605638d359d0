/**
 * `@poolgate/client/iam`: the caller's IAM identity proved to a gateway (the client's `sign` hook, and
 * a middleware for any AWS SDK v3 client). Needs the optional peer dependencies
 * `@smithy/signature-v4` and, unless credentials are passed, `@aws-sdk/credential-provider-node`.
 */
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
