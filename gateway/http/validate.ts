/** Parses a request body with its zod schema; failures become INVALID_REQUEST listing every problem. */
import type { z } from "zod";
import { GatewayError } from "../errors.js";

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.join(".") : "(body)",
    message: issue.message,
  }));
  const summary = issues
    .slice(0, 3)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join("; ");
  throw new GatewayError("INVALID_REQUEST", `invalid request: ${summary}`, { issues });
}
