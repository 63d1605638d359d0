/**
 * Static bearer tokens: `{"<principal>": "<token>" | ["<token>", ...]}` from a file or a Secrets
 * Manager secret, read at start and again every refreshIntervalMs (several tokens per principal let a
 * rotation overlap). Tokens are kept only as SHA-256 digests and every lookup compares against all of
 * them in constant time, so neither a token nor its position leaks through timing. A refresh that
 * fails keeps the tokens already loaded; nothing about token values is ever logged.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { SecretsReader } from "../aws/secrets-manager.js";
import type { AuthConfig } from "../config/schema.js";
import type { Logger } from "../logger.js";

/** Long enough that guessing is hopeless; printable, without spaces (it travels in a header). */
const tokenSchema = z
  .string()
  .min(24, "tokens must be at least 24 characters")
  .max(512)
  .regex(/^[\x21-\x7e]+$/, "tokens are printable ASCII without spaces");

const tokensDocumentSchema = z.record(z.string().min(1), z.union([tokenSchema, z.array(tokenSchema).min(1)]));

type BearerSettings = NonNullable<AuthConfig["bearer"]>;

interface StoredToken {
  digest: Buffer;
  principal: string;
}

const digestOf = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/** Parses a tokens document; the error names the problem, never a token. */
export function parseTokens(text: string, where: string): StoredToken[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${where} is not valid JSON`);
  }
  const parsed = tokensDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${where}: ${issue ? `${issue.path.map(String).join(".")}: ${issue.message}` : "invalid"}`);
  }
  const stored: StoredToken[] = [];
  const seen = new Set<string>();
  for (const [principal, tokens] of Object.entries(parsed.data)) {
    for (const token of Array.isArray(tokens) ? tokens : [tokens]) {
      const digest = digestOf(token);
      const key = digest.toString("hex");
      if (seen.has(key)) throw new Error(`${where}: the same token is listed twice (principal ${principal})`);
      seen.add(key);
      stored.push({ digest, principal });
    }
  }
  return stored;
}

export class BearerTokens {
  private tokens: StoredToken[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: BearerSettings,
    private readonly secrets: SecretsReader,
    private readonly logger: Logger,
  ) {}

  /** Loads the tokens (a failure stops start-up) and schedules the refreshes. */
  async start(): Promise<void> {
    this.tokens = await this.load();
    this.logger.info({ source: this.source(), tokens: this.tokens.length }, "bearer tokens loaded");
    this.timer = setInterval(() => void this.refresh(), this.settings.refreshIntervalMs);
    this.timer.unref();
  }

  /** The principal whose token this is, or undefined. Constant time in the token and the store's contents. */
  principalOf(token: string): string | undefined {
    const presented = digestOf(token);
    let found: string | undefined;
    for (const stored of this.tokens) {
      // No early exit: every comparison runs whether or not one matched.
      if (timingSafeEqual(presented, stored.digest) && found === undefined) found = stored.principal;
    }
    return found;
  }

  async refresh(): Promise<void> {
    try {
      this.tokens = await this.load();
    } catch (err) {
      this.logger.warn({ source: this.source(), error: err instanceof Error ? err.message : "error" }, "bearer tokens not refreshed; keeping the ones loaded");
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  private source(): string {
    return this.settings.tokensFile ?? this.settings.secretArn ?? "none";
  }

  private async load(): Promise<StoredToken[]> {
    const { tokensFile, secretArn } = this.settings;
    if (tokensFile !== undefined) {
      let text: string;
      try {
        text = await readFile(tokensFile, "utf8");
      } catch (err) {
        throw new Error(`cannot read auth.bearer.tokensFile ${tokensFile}: ${(err as NodeJS.ErrnoException).code ?? "error"}`, { cause: err });
      }
      return parseTokens(text, `auth.bearer.tokensFile ${tokensFile}`);
    }
    if (secretArn === undefined) throw new Error("auth.bearer needs tokensFile or secretArn");
    const text = await this.secrets.read(secretArn);
    if (text === undefined) throw new Error(`secret ${secretArn} has no current value`);
    return parseTokens(text, `secret ${secretArn}`);
  }
}
