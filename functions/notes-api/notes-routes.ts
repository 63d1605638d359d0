/**
 * The notes API's routes on Event Handler's HTTP router, and how failures are answered: invalid
 * requests (Parser's ParseError) as 400 with their issues, a unique title taken as 409, an
 * Idempotency-Key reused for another note as 422, a failure the gateway calls retryable as 503, and
 * anything else as 500, logged and counted (`RequestFailed`). Answers never echo SQL or a database
 * message.
 */
import { HttpError, type Router } from "@aws-lambda-powertools/event-handler/http";
import type { Logger } from "@aws-lambda-powertools/logger";
import { MetricUnit, type Metrics } from "@aws-lambda-powertools/metrics";
import { ParseError } from "@aws-lambda-powertools/parser/errors";
import type { Context } from "aws-lambda";
import { DatabaseError, DeadlineExceededError, type PoolgateClient, PoolgateError, TransportError } from "@poolgate/client";
import { idempotencyKeyOf, noteFromBody, notePath } from "./note-requests.js";

/** A row of the table (a type alias: Event Handler takes it as a JSON object). */
type Note = {
  id: number;
  title: string;
  body: string;
  updated_at: string;
};

export interface NoteRoutesOptions {
  table: string;
  /** The client for the invocation being served. */
  clientFor: (context: Context) => PoolgateClient;
  logger: Logger;
  metrics: Metrics;
}

const json = (status: number, body: unknown): Response => Response.json(body, { status });
const noSuchNote = () => json(404, { message: "no such note" });

export function registerNoteRoutes(app: Router, { table, clientFor, logger, metrics }: NoteRoutesOptions): void {
  const columns = "id, title, body, updated_at";

  app.get("/notes", async ({ context }) => {
    const { rows } = await clientFor(context).query<Note>(`select ${columns} from ${table} order by id limit 100`, [], { intent: "read" });
    return { notes: rows };
  });

  app.get("/notes/:id", async ({ context, params }) => {
    const { rows } = await clientFor(context).query<Note>(`select ${columns} from ${table} where id = $1`, [notePath(params)], { intent: "read" });
    return rows[0] ?? noSuchNote();
  });

  app.post("/notes", async ({ context, req }) => {
    const note = noteFromBody(await req.text());
    const key = idempotencyKeyOf(req.headers);
    // The key is scoped to this route, so it never meets another write's.
    const { rows } = await clientFor(context).query<Note>(`insert into ${table} (title, body) values ($1, $2) returning ${columns}`, [note.title, note.body], {
      ...(key === undefined ? {} : { idempotencyKey: `notes-api:create:${key}` }),
    });
    metrics.addMetric("NoteCreated", MetricUnit.Count, 1);
    return json(201, rows[0]);
  });

  app.put("/notes/:id", async ({ context, params, req }) => {
    const id = notePath(params);
    const note = noteFromBody(await req.text());
    const sql = `update ${table} set title = $1, body = $2, updated_at = now() where id = $3 returning ${columns}`;
    const { rows } = await clientFor(context).query<Note>(sql, [note.title, note.body, id]);
    return rows[0] ?? noSuchNote();
  });

  app.delete("/notes/:id", async ({ context, params }) => {
    const { rowCount } = await clientFor(context).query(`delete from ${table} where id = $1`, [notePath(params)]);
    return rowCount ? new Response(null, { status: 204 }) : noSuchNote();
  });

  // Registration order matters: a handler for a base class also takes its subclasses, first match wins.
  app.errorHandler(ParseError, (error) => Promise.resolve(json(400, { message: "invalid request", issues: issuesOf(error) })));
  app.errorHandler(Error, (error) => Promise.resolve(failureAnswer(error, logger, metrics)));
}

/** What a failure is answered with; the unexpected ones are logged and counted. */
function failureAnswer(error: Error, logger: Logger, metrics: Metrics): Response {
  // The router's own (no such route, method not allowed) keep their answer.
  if (error instanceof HttpError) return error.toWebResponse();
  if (error instanceof DatabaseError && error.sqlstate === "23505") return json(409, { message: "a note like this exists already" });
  if (error instanceof PoolgateError && error.code === "IDEMPOTENCY_KEY_REUSED") return json(422, { message: "this Idempotency-Key was used for another note" });
  logger.error("request failed", { error, code: error instanceof PoolgateError ? error.code : undefined });
  metrics.addMetric("RequestFailed", MetricUnit.Count, 1);
  const retryable = (error instanceof PoolgateError && error.retryable) || error instanceof DeadlineExceededError || (error instanceof TransportError && error.notSent);
  return json(retryable ? 503 : 500, { message: "the request failed; try again later" });
}

/** Parser's issues (Standard Schema's: a message and a path each) as short strings for the caller. */
function issuesOf(error: ParseError): string[] {
  const issues = Array.isArray(error.cause) ? (error.cause as { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[]) : [];
  return issues.map((issue) => {
    const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}
