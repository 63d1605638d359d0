/** A bearer-tokens file (`auth.bearer.tokensFile`) in a temporary directory, for tests that authenticate. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TokensFile {
  readonly path: string;
  /** Replaces the file's contents (a rotation). */
  write(tokens: Record<string, string | string[]>): void;
  remove(): void;
}

export function writeTokensFile(tokens: Record<string, string | string[]>): TokensFile {
  const dir = mkdtempSync(join(tmpdir(), "poolgate-tokens-"));
  const path = join(dir, "tokens.json");
  const write = (next: Record<string, string | string[]>) => writeFileSync(path, JSON.stringify(next));
  write(tokens);
  return { path, write, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The header that carries a bearer token on both surfaces. */
export const bearer = (token: string): Record<string, string> => ({ "x-poolgate-auth": `Bearer ${token}` });
