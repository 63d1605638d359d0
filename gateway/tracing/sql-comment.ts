/**
 * sqlcommenter comments (https://google.github.io/sqlcommenter/spec/): `key='value'` pairs, sorted by
 * key, keys and values URL-encoded and a value's `'` escaped, joined by commas inside one block comment
 * appended to the statement. The comment goes on a line of its own, so that a caller's trailing `--`
 * comment cannot swallow it; URL encoding leaves no `/` in it, so it can neither end early nor open a
 * nested PostgreSQL comment.
 */
import type { RequestTrace } from "./request-trace.js";

function encode(text: string): string {
  return encodeURIComponent(text).replace(/'/g, "\\'");
}

/** The comment for a set of tags (empty values left out). */
export function sqlComment(tags: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(tags)
    .filter((key) => tags[key] !== "")
    .sort()
    .map((key) => `${encode(key)}='${encode(tags[key] as string)}'`);
  return pairs.length === 0 ? "" : `/*${pairs.join(",")}*/`;
}

/** The caller's SQL with the active request's comment (traceparent, principal, route) appended. */
export function withSqlComment(sql: string, request: RequestTrace): string {
  return `${sql}\n${sqlComment({ traceparent: request.traceparent, principal: request.principal, route: request.route })}`;
}

/** The active request's comment applies: tracing on with sqlComments, inside a traced request. */
export function sqlCommentFor(request: RequestTrace | undefined): RequestTrace | undefined {
  return request !== undefined && request.settings.sqlComments ? request : undefined;
}
