/**
 * Authentication: turns a request's credential header into a Caller. `x-poolgate-auth` carries
 * `AWS-STS <proof>` (IAM, see sts-proof.ts) or `Bearer <token>` on both surfaces; the native API also
 * reads `Authorization` (the Data API surface cannot: the AWS SDK puts its SigV4 signature there, which
 * the gateway has no key to check). With neither method configured every caller is anonymous, and the
 * configuration allows listening on loopback only.
 */
import type { SecretsReader } from "../aws/secrets-manager.js";
import type { GatewayConfig } from "../config/schema.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../logger.js";
import { BearerTokens } from "./bearer-tokens.js";
import { ANONYMOUS, type Caller } from "./caller.js";
import { StsVerifier } from "./sts-verifier.js";

export const AUTH_HEADER = "x-poolgate-auth";

/** Where the credential was found: the dedicated header, or the native API's Authorization. */
export interface PresentedCredential {
  poolgateAuth: string | undefined;
  authorization: string | undefined;
}

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;
const STS = /^AWS-STS\s/;

export class Authenticator {
  private readonly sts: StsVerifier | undefined;
  private readonly bearer: BearerTokens | undefined;
  /** auth.iam.accounts: the AWS accounts whose identities are accepted (undefined: any). */
  private readonly accounts: ReadonlySet<string> | undefined;

  constructor(config: GatewayConfig, secrets: SecretsReader, logger: Logger) {
    this.sts = config.auth.iam ? new StsVerifier(config.auth.iam) : undefined;
    this.accounts = config.auth.iam?.accounts === undefined ? undefined : new Set(config.auth.iam.accounts);
    this.bearer = config.auth.bearer ? new BearerTokens(config.auth.bearer, secrets, logger) : undefined;
  }

  /** Whether callers must prove who they are. */
  get enabled(): boolean {
    return this.sts !== undefined || this.bearer !== undefined;
  }

  async start(): Promise<void> {
    await this.bearer?.start();
  }

  /** Reads the bearer tokens again now (they are also re-read every refreshIntervalMs). */
  async refresh(): Promise<void> {
    await this.bearer?.refresh();
  }

  close(): void {
    this.bearer?.close();
    this.sts?.close();
  }

  async authenticate(credential: PresentedCredential): Promise<Caller> {
    if (!this.enabled) return ANONYMOUS;
    const value = credential.poolgateAuth ?? credential.authorization;
    if (value === undefined || value.trim() === "") {
      throw new GatewayError("UNAUTHENTICATED", `no credential: send ${AUTH_HEADER}: ${this.accepted()}`);
    }
    if (STS.test(value)) {
      if (!this.sts) throw new GatewayError("UNAUTHENTICATED", `IAM proofs are not accepted by this gateway; send ${AUTH_HEADER}: ${this.accepted()}`);
      const identity = await this.sts.verify(value);
      const account = identity.arn.split(":")[4] ?? "";
      if (this.accounts && !this.accounts.has(account)) {
        throw new GatewayError("UNAUTHENTICATED", `identities of AWS account ${account} are not accepted by this gateway (auth.iam.accounts)`);
      }
      return { principal: identity.principal, method: "iam", arn: identity.arn };
    }
    const bearer = BEARER.exec(value);
    if (bearer?.[1] !== undefined) {
      if (!this.bearer) throw new GatewayError("UNAUTHENTICATED", `bearer tokens are not accepted by this gateway; send ${AUTH_HEADER}: ${this.accepted()}`);
      const principal = this.bearer.principalOf(bearer[1]);
      if (principal === undefined) throw new GatewayError("UNAUTHENTICATED", "unknown bearer token");
      return { principal, method: "bearer" };
    }
    throw new GatewayError("UNAUTHENTICATED", `unrecognised credential; send ${AUTH_HEADER}: ${this.accepted()}`);
  }

  private accepted(): string {
    const schemes = [this.sts ? "AWS-STS <proof> (poolgate/client iamAuth)" : undefined, this.bearer ? "Bearer <token>" : undefined];
    return schemes.filter((scheme) => scheme !== undefined).join(" or ");
  }
}
