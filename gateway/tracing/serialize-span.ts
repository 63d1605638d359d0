/**
 * The `poolgate.serialize` span: writing a request's answer as JSON, under the request's span, with the
 * length it came to. Every surface's result writing is measured alike (the native API in
 * http/routes/query.ts; the Data API, Neon and PlanetScale through `serializeTraced`). With nothing
 * recording, `serializeTraced` is a call of `write` and nothing more (docs/tracing.md).
 */
import { failSpan, startSpan } from "./request-trace.js";

export const SERIALIZE_SPAN = "poolgate.serialize";

/** `write(input)` under a `poolgate.serialize` span when the request is traced; a failure fails the span. */
export function serializeTraced<T>(write: (input: T) => string, input: T): string {
  const span = startSpan(SERIALIZE_SPAN);
  if (span === undefined) return write(input);
  let json: string;
  try {
    json = write(input);
  } catch (err) {
    failSpan(span, err);
    throw err;
  }
  span.setAttribute("poolgate.response.chars", json.length);
  span.end();
  return json;
}
