/**
 * Reads secrets from AWS Secrets Manager: database credentials (rotation) and bearer tokens. One
 * client per region (taken from the secret's ARN), credentials from the SDK's default chain (the ECS
 * task role), and an endpoint override for VPC endpoints and test stand-ins. Secret values are never
 * logged; errors name the ARN only.
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";

/** The staging labels the gateway reads: the current value, and the one a rotation is putting in place. */
export type SecretStage = "AWSCURRENT" | "AWSPENDING";

export class SecretReadError extends Error {
  constructor(secretArn: string, cause: unknown) {
    super(`cannot read secret ${secretArn}: ${cause instanceof Error ? cause.name : "error"}`, { cause });
    this.name = "SecretReadError";
  }
}

/** The region an ARN names (arn:aws:secretsmanager:<region>:<account>:secret:<name>). */
export function regionOfArn(arn: string): string {
  const region = arn.split(":")[3];
  if (!region) throw new Error(`no region in ARN ${arn}`);
  return region;
}

/** Bounds for one GetSecretValue call (the SDK's defaults wait without limit). */
const READ_CONNECT_TIMEOUT_MS = 2000;
const READ_TIMEOUT_MS = 5000;

export class SecretsReader {
  private readonly clients = new Map<string, SecretsManagerClient>();

  constructor(private readonly endpoint: string | undefined) {}

  /** The secret's string at that stage; undefined when no version carries the stage (no rotation under way). */
  async read(secretArn: string, stage: SecretStage = "AWSCURRENT"): Promise<string | undefined> {
    try {
      const answer = await this.client(regionOfArn(secretArn)).send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: stage }));
      if (answer.SecretString !== undefined) return answer.SecretString;
      if (answer.SecretBinary !== undefined) return Buffer.from(answer.SecretBinary).toString("utf8");
      return undefined;
    } catch (err) {
      if (stage === "AWSPENDING" && err instanceof ResourceNotFoundException) return undefined;
      throw new SecretReadError(secretArn, err);
    }
  }

  private client(region: string): SecretsManagerClient {
    let client = this.clients.get(region);
    if (!client) {
      client = new SecretsManagerClient({
        region,
        ...(this.endpoint === undefined ? {} : { endpoint: this.endpoint }),
        maxAttempts: 2,
        // A re-read runs while a database session waits to log in: a silent endpoint must not hold it.
        requestHandler: { connectionTimeout: READ_CONNECT_TIMEOUT_MS, requestTimeout: READ_TIMEOUT_MS },
      });
      this.clients.set(region, client);
    }
    return client;
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
  }
}
