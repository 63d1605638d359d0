/**
 * RDS IAM database authentication: the password of every new session is a token signed with the
 * task's AWS credentials for one host, port and user (@aws-sdk/rds-signer). Tokens are valid for 15
 * minutes, so each endpoint's token is cached and minted again once less than 5 minutes remain (a
 * session needs the token only while it logs in), and minted again after the database refused one.
 * Aurora DSQL's tokens (dsql-tokens.ts) are held the same way, with their own minter.
 */
import { Signer, type SignerConfig } from "@aws-sdk/rds-signer";
import { type Clock, systemClock } from "../clock.js";
import { type DatabaseCredentials, type DatabaseLogin, databaseLogin, type SessionTarget, sameLogin } from "./database-credentials.js";

/** Signs a token for `user` at `target`. */
export type TokenMinter = (target: SessionTarget, user: string) => Promise<string>;

/** Mints with @aws-sdk/rds-signer, all endpoints sharing one AWS credentials provider. */
export function rdsSignerMinter(region: string, credentials: SignerConfig["credentials"]): TokenMinter {
  return (target, user) => new Signer({ hostname: target.host, port: target.port, username: user, region, credentials }).getAuthToken();
}

/** The region in an RDS host name: <name>.<id>.<region>.rds.amazonaws.com(.cn). */
export function regionOfRdsHost(host: string): string | undefined {
  return /\.([a-z]{2}(?:-[a-z]+)+-\d)\.rds\.amazonaws\.com(?:\.cn)?$/i.exec(host)?.[1]?.toLowerCase();
}

export interface IamTokenCredentialsOptions {
  clock?: Clock;
  /** How long RDS accepts a token (X-Amz-Expires=900). */
  validityMs?: number;
  /** A cached token is replaced once less than this remains. */
  refreshBeforeExpiryMs?: number;
}

interface CachedToken {
  login: DatabaseLogin;
  mintedAt: number;
}

export class IamTokenCredentials implements DatabaseCredentials {
  readonly kind = "iam-token" as const;
  private readonly tokens = new Map<string, CachedToken>();
  private readonly minting = new Map<string, Promise<DatabaseLogin>>();
  private readonly clock: Clock;
  /** A token older than this is replaced. */
  private readonly reuseForMs: number;
  private readonly validityMs: number;

  constructor(
    private readonly user: string,
    private readonly mint: TokenMinter,
    /** The endpoint whose token prepare() mints, proving at start that AWS credentials are at hand. */
    private readonly startTarget: SessionTarget,
    options: IamTokenCredentialsOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.validityMs = options.validityMs ?? 15 * 60_000;
    this.reuseForMs = this.validityMs - (options.refreshBeforeExpiryMs ?? 5 * 60_000);
  }

  async prepare(): Promise<void> {
    await this.current(this.startTarget);
  }

  async current(target: SessionTarget): Promise<DatabaseLogin> {
    const cached = this.tokens.get(keyOf(target));
    if (cached !== undefined && this.clock.wallNow() - cached.mintedAt < this.reuseForMs) return cached.login;
    return this.mintFor(target);
  }

  async afterAuthenticationFailure(failed: DatabaseLogin, target: SessionTarget): Promise<boolean> {
    const key = keyOf(target);
    const pending = this.minting.get(key);
    if (pending !== undefined) return !sameLogin(await pending, failed);
    const cached = this.tokens.get(key);
    if (cached !== undefined && !sameLogin(cached.login, failed)) return true;
    // A token minted within the same second as the refused one is the same token: then false.
    return !sameLogin(await this.mintFor(target), failed);
  }

  /** One signing per endpoint at a time: a burst of new sessions shares it. */
  private mintFor(target: SessionTarget): Promise<DatabaseLogin> {
    const key = keyOf(target);
    let pending = this.minting.get(key);
    if (pending === undefined) {
      // Stamped before signing, so the token's age is never underestimated.
      // Tokens are signed with wall-clock time, so their age is measured with it too.
      const mintedAt = this.clock.wallNow();
      pending = this.mint(target, this.user)
        .then((token) => {
          const login = databaseLogin(this.user, token);
          this.forgetExpired(mintedAt);
          this.tokens.set(key, { login, mintedAt });
          return login;
        })
        .finally(() => this.minting.delete(key));
      this.minting.set(key, pending);
    }
    return pending;
  }

  /** Endpoints come and go (Aurora instances): tokens nobody can use any more are dropped. */
  private forgetExpired(now: number): void {
    for (const [key, cached] of this.tokens) {
      if (now - cached.mintedAt >= this.validityMs) this.tokens.delete(key);
    }
  }
}

function keyOf(target: SessionTarget): string {
  return `${target.host}:${target.port}`;
}
