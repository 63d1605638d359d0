/**
 * The unmodified AWS SDK Data API client pointed at a test gateway (dummy AWS credentials: the gateway
 * does not check SigV4), optionally carrying a Poolgate credential through the client SDK's
 * one-line middleware.
 */
import { RDSDataClient } from "@aws-sdk/client-rds-data";
import { addPoolgateAuth } from "../../client/iam-auth.js";

export function dataApiClient(endpoint: string, options: { region?: string; auth?: { header(): Promise<string> } } = {}): RDSDataClient {
  const client = new RDSDataClient({ region: options.region ?? "us-east-1", endpoint, credentials: { accessKeyId: "x", secretAccessKey: "y" }, maxAttempts: 1 });
  if (options.auth) addPoolgateAuth(client, options.auth);
  return client;
}

/** A static Poolgate credential (`Bearer <token>`) for dataApiClient's `auth`. */
export const bearerAuth = (token: string) => ({ header: () => Promise.resolve(`Bearer ${token}`) });
