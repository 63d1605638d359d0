/**
 * A cached answer as stored: a header line (the generations it was read at, the primary's position
 * before the read, when it was read and for how long it may be served) and the answer's JSON text
 * without its closing brace, so a hit appends its own fields and sends it as it is.
 */
import { z } from "zod";

const headerSchema = z.object({
  /** The store's generations of the entry's dependencies, as read before the query ran. */
  g: z.array(z.string()),
  /** The primary's last known position when the read began (a lower bound of what it saw), or null. */
  p: z.string().nullable(),
  /** When the read began (wall clock, ms). */
  at: z.number(),
  ttl: z.number(),
  swr: z.number(),
});
export type EntryHeader = z.infer<typeof headerSchema>;

export interface Entry {
  header: EntryHeader;
  /** The answer's JSON object text, without its closing `}`. */
  body: string;
}

export function encodeEntry(entry: Entry): string {
  return `${JSON.stringify(entry.header)}\n${entry.body}`;
}

/** The entry, or undefined when the text is not one (another version's, or damaged): a miss. */
export function decodeEntry(text: string): Entry | undefined {
  const newline = text.indexOf("\n");
  if (newline < 0) return undefined;
  try {
    const header = headerSchema.safeParse(JSON.parse(text.slice(0, newline)));
    return header.success ? { header: header.data, body: text.slice(newline + 1) } : undefined;
  } catch {
    return undefined;
  }
}
