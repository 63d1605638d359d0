/**
 * The caller's own text of object and array parameters, read from the request body and attached to the
 * validated parameters (engines/json-text.ts), so the engines bind what the caller wrote rather than
 * what JSON.parse made of it: `{"id": 9007199254740993}` keeps its last digit, `1.50` its zero. The body
 * is scanned only when a statement has such a parameter.
 */
import type { Param } from "../../schemas/query.js";
import { jsonValueSources, withJsonSource } from "../engines/json-text.js";

/** One parameter list of a request: where it is in the body, and its validated values. */
export interface ParamList {
  path: readonly (string | number)[];
  params: readonly Param[] | undefined;
}

/** Where a single statement's parameters are in its request body. */
const PARAMS_PATH: readonly string[] = ["params"];

/** keepParamSources for a request of one statement, its parameters at `params` (none: nothing to do). */
export function keepStatementParamSources(bodyText: string | undefined, params: readonly Param[] | undefined): void {
  if (params !== undefined && params.length > 0) keepParamSources(bodyText, [{ path: PARAMS_PATH, params }]);
}

/** Objects and arrays are JSON texts for the engines; `$bytea` and `$json` carry their own text. */
function takesJsonText(param: Param | undefined): param is unknown[] | Record<string, unknown> {
  return typeof param === "object" && param !== null && (Array.isArray(param) || !("$bytea" in param || "$json" in param));
}

/**
 * Attaches, to each object or array parameter of `lists`, its text in `bodyText` (the request body as
 * the caller sent it: FastifyRequest.bodyText). Where a key is repeated in the body, the later
 * occurrence is the one JSON.parse kept, and the later one is attached last.
 */
export function keepParamSources(bodyText: string | undefined, lists: readonly ParamList[]): void {
  // Most requests bind no object or array: one scan of their parameters, and nothing allocated.
  let wanted: Map<string, readonly Param[]> | undefined;
  for (const list of lists) {
    if (list.params?.some(takesJsonText)) (wanted ??= new Map()).set(JSON.stringify(list.path), list.params);
  }
  if (wanted === undefined) return;
  if (bodyText === undefined) return;
  const listAt = (path: readonly (string | number)[]) => wanted.get(JSON.stringify(path.slice(0, -1)));
  jsonValueSources(
    bodyText,
    (path) => typeof path[path.length - 1] === "number" && takesJsonText(listAt(path)?.[path[path.length - 1] as number]),
    (path, source) => {
      const param = listAt(path)?.[path[path.length - 1] as number];
      if (takesJsonText(param)) withJsonSource(param, source);
    },
  );
}
