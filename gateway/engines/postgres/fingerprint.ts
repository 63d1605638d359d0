/**
 * PostgreSQL fingerprints for query insights: libpg-query's fingerprint (pg_query's, the same for texts
 * that differ only in constants, comments or spacing) and its normalised text (every constant replaced
 * by $n, as pg_stat_statements shows it). Texts too large to parse on the event loop share one
 * fingerprint, like those the parser refuses.
 */
import { fingerprintSync, normalizeSync } from "libpg-query";
import { sampleOf, type StatementFingerprint, UNREADABLE } from "../statement-fingerprint.js";
import { LARGE_TEXT_CHARACTERS } from "./large-text.js";

const LARGE_TEXT: StatementFingerprint = Object.freeze({
  id: "large-text",
  sample: `(a text over ${LARGE_TEXT_CHARACTERS / 1024} KiB: not parsed for insights)`,
});

const FINGERPRINT = /^[0-9a-f]{16}$/;

export function postgresFingerprint(sql: string): StatementFingerprint {
  if (sql.length > LARGE_TEXT_CHARACTERS) return LARGE_TEXT;
  try {
    // On a text it cannot parse, libpg-query answers the parser's message (which quotes the text)
    // instead of throwing: only a fingerprint's 16 hex digits are one.
    const id = fingerprintSync(sql);
    return FINGERPRINT.test(id) ? { id, sample: sampleOf(normalizeSync(sql)) } : UNREADABLE;
  } catch {
    return UNREADABLE;
  }
}
