/**
 * What a notes request may carry, as zod schemas that Powertools' Parser checks (`parse` throws a
 * ParseError naming every issue, which the router answers as a 400): no hand-written validation.
 */
import { parse } from "@aws-lambda-powertools/parser";
import { JSONStringified } from "@aws-lambda-powertools/parser/helpers";
import { z } from "zod";

/** A note as `POST /notes` and `PUT /notes/{id}` take it (a JSON body). */
export const NoteInput = z.strictObject({ title: z.string().min(1).max(200), body: z.string().max(10_000).default("") });
export type NoteInput = z.infer<typeof NoteInput>;

/** `{id}` of `/notes/{id}`: a positive integer that fits the table's serial ids. */
export const NotePath = z.strictObject({ id: z.string().regex(/^[1-9][0-9]{0,9}$/, "a positive integer").transform(Number).pipe(z.number().max(2 ** 31 - 1)) });

/**
 * The caller's `Idempotency-Key` header: what the gateway accepts as a key, less room for the route's
 * prefix (`notes-api:create:`).
 */
export const IdempotencyKeyHeader = z.string().regex(/^[\x21-\x7e]{1,200}$/, "printable ASCII without spaces, at most 200 characters").optional();

/** The request's body (Event Handler has decoded a base64 one), parsed as JSON and checked as a note. */
export function noteFromBody(text: string): NoteInput {
  return parse(text, undefined, JSONStringified(NoteInput));
}

export function notePath(params: Record<string, string>): number {
  return parse(params, undefined, NotePath).id;
}

export function idempotencyKeyOf(headers: Headers): string | undefined {
  return parse(headers.get("idempotency-key") ?? undefined, undefined, IdempotencyKeyHeader);
}
