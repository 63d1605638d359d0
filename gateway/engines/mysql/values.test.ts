import Module, { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Param } from "../../../schemas/query.js";
import { TypedParam } from "../typed-param.js";
import { encodeParams } from "./values.js";

/** The Data API's typed values (bind.ts) travel among the JSON parameters. */
const typed = (type: "int8" | "float8", value: string) => new TypedParam(type, value) as unknown as Param;

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
const moduleInternals = Module as unknown as { _load: Loader };
const realLoad = moduleInternals._load;

afterEach(() => {
  moduleInternals._load = realLoad;
});

describe("MySQL parameter encoding", () => {
  it("binds parameters without loading a module (mysql2's TypedParameter getter requires on every access)", () => {
    encodeParams([1, typed("int8", "9007199254740993"), typed("float8", "1.5")]);
    const loaded: string[] = [];
    moduleInternals._load = function (this: unknown, request, parent, isMain) {
      loaded.push(request);
      return realLoad.call(this, request, parent, isMain);
    };
    const encoded = encodeParams([42, -7, typed("int8", "9007199254740993"), typed("float8", "1.5"), "text", 1.25, true, null]);
    expect(loaded).toEqual([]);
    expect(encoded.map((value) => (typeof value === "object" && value !== null ? { ...value } : value))).toEqual([
      // Safe integers stay numbers (the patch: checked and written without BigInt arithmetic); larger ones are BigInts.
      { type: 8, value: 42, unsigned: false },
      { type: 8, value: -7, unsigned: false },
      { type: 8, value: 9007199254740993n, unsigned: false },
      { type: 5, value: 1.5, unsigned: false },
      "text",
      1.25,
      true,
      null,
    ]);
  });

  it("binds typed parameters through the patched mysql2 (patches/): plain objects, not a spread's dictionary", () => {
    const require = createRequire(import.meta.url);
    const typedParameters = require(join(dirname(require.resolve("mysql2")), "lib/packets/typed_parameter.js")) as {
      encodeTypedParameter(parameter: unknown, encoding: string, timezone: string, jsonAsString: boolean): Record<string, unknown>;
    };
    const [bigint] = encodeParams([42]);
    const encoded = typedParameters.encodeTypedParameter(bigint, "utf8", "local", false);
    // Upstream returns { ...encoded, type, unsigned } (value, length, writer, type, unsigned): about 5 µs a parameter.
    expect(Object.keys(encoded)).toEqual(["value", "type", "length", "byteLength", "writer", "unsigned", "isNull"]);
    expect(encoded).toMatchObject({ value: 42, type: 8, length: 8, unsigned: false, isNull: false });
    // The integer encoder (and its writer) is made once per type, not per parameter.
    const [again] = encodeParams([43]);
    expect(typedParameters.encodeTypedParameter(again, "utf8", "local", false).writer).toBe(encoded.writer);
  });
});
