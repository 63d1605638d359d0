/**
 * Database credentials from a Secrets Manager secret in the RDS format ({"username", "password", ...}),
 * kept across rotations. The secret is read at start; after the database refuses the login it holds,
 * it is read again. An RDS rotation sets the new password on the database *before* it moves the
 * AWSCURRENT label to it, so when AWSCURRENT still holds the refused password, AWSPENDING is tried:
 * connections opened in that window keep working, and a rotation loses no request.
 */
import { z } from "zod";
import type { SecretsReader, SecretStage } from "../aws/secrets-manager.js";
import type { Logger } from "../logger.js";
import { type Clock, systemClock } from "../clock.js";
import { type DatabaseCredentials, type DatabaseLogin, databaseLogin, sameLogin } from "./database-credentials.js";

/** The part of SecretsReader this source uses. */
export type SecretSource = Pick<SecretsReader, "read">;

const rdsSecretSchema = z.looseObject({ username: z.string().min(1), password: z.string().min(1) });

export interface SecretsManagerCredentialsOptions {
  clock?: Clock;
  /**
   * After a read, a login refused again within this long does not cause another read: the secret was
   * just read and said the same, so reading it again would only multiply calls while a database
   * refuses everyone (a wrong pg_hba line, a locked account). Default 1000 ms.
   */
  minRereadIntervalMs?: number;
}

export class SecretsManagerCredentials implements DatabaseCredentials {
  readonly kind = "password" as const;
  private held: DatabaseLogin | undefined;
  private reading: Promise<DatabaseLogin> | undefined;
  private lastReadAt: number | undefined;
  private readonly clock: Clock;
  private readonly minRereadIntervalMs: number;

  constructor(
    private readonly secretArn: string,
    private readonly secrets: SecretSource,
    private readonly logger: Logger,
    options: SecretsManagerCredentialsOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.minRereadIntervalMs = options.minRereadIntervalMs ?? 1000;
  }

  async prepare(): Promise<void> {
    await this.current();
  }

  async current(): Promise<DatabaseLogin> {
    return this.held ?? (await this.reread(undefined));
  }

  async afterAuthenticationFailure(failed: DatabaseLogin): Promise<boolean> {
    // A session that started with an older login: a refresh has already moved on.
    if (this.held !== undefined && !sameLogin(this.held, failed)) return true;
    if (this.reading === undefined && this.lastReadAt !== undefined && this.clock.now() - this.lastReadAt < this.minRereadIntervalMs) {
      return false;
    }
    return !sameLogin(await this.reread(failed), failed);
  }

  /** One read at a time: a burst of refused connects shares it. */
  private reread(failed: DatabaseLogin | undefined): Promise<DatabaseLogin> {
    this.reading ??= this.read(failed).finally(() => {
      this.reading = undefined;
      this.lastReadAt = this.clock.now();
    });
    return this.reading;
  }

  private async read(failed: DatabaseLogin | undefined): Promise<DatabaseLogin> {
    const current = await this.readStage("AWSCURRENT");
    if (current === undefined) throw new Error(`secret ${this.secretArn} has no AWSCURRENT value`);
    let chosen = current;
    if (failed !== undefined && sameLogin(current, failed)) {
      const pending = await this.readStage("AWSPENDING");
      if (pending !== undefined && !sameLogin(pending, failed)) {
        chosen = pending;
        this.logger.info({ secretArn: this.secretArn, user: pending.user }, "the database refused the AWSCURRENT password; using AWSPENDING (a rotation is under way)");
      }
    }
    if (this.held !== undefined && !sameLogin(this.held, chosen)) {
      this.logger.info({ secretArn: this.secretArn, user: chosen.user }, "database credentials changed in Secrets Manager; new sessions use them");
    }
    this.held = chosen;
    return chosen;
  }

  /** The stage's login; undefined when no version carries the stage. Errors never quote the value. */
  private async readStage(stage: SecretStage): Promise<DatabaseLogin | undefined> {
    const text = await this.secrets.read(this.secretArn, stage);
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text: it must not travel.
      throw new Error(`secret ${this.secretArn} (${stage}) is not JSON; expected the RDS format {"username", "password"}`);
    }
    const parsed = rdsSecretSchema.safeParse(json);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => issue.path.join(".") || "(root)").join(", ");
      throw new Error(`secret ${this.secretArn} (${stage}) is not in the RDS format {"username", "password"}: check ${fields}`);
    }
    return databaseLogin(parsed.data.username, parsed.data.password);
  }
}
