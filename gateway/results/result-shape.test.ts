import { describe, expect, it } from "vitest";
import { JsonText } from "../engines/json-text.js";
import { serializeResult } from "./result-shape.js";

const result = {
  command: "SELECT",
  columns: [
    { name: "doc", type: "jsonb" },
    { name: "docs", type: "_jsonb" },
    { name: "n", type: "int8" },
    { name: "n", type: "text" },
  ],
  rows: [[new JsonText('{"id": 9007199254740993}'), [new JsonText("1e400"), null], "9223372036854775807", "last"]],
  rowCount: 1,
};

describe("results on the wire", () => {
  it("embeds database JSON as the server printed it, in arrays too, in either row mode", () => {
    expect(serializeResult(result, "array")).toBe(
      '{"command":"SELECT","columns":[{"name":"doc","type":"jsonb"},{"name":"docs","type":"_jsonb"},{"name":"n","type":"int8"},{"name":"n","type":"text"}],' +
        '"rows":[[{"id": 9007199254740993},[1e400,null],"9223372036854775807","last"]],"rowCount":1}',
    );
    // As objects, a repeated column name keeps its first place and its last value, as JSON.parse would.
    expect(serializeResult(result, "object", 1)).toContain('"rows":[{"doc":{"id": 9007199254740993},"docs":[1e400,null],"n":"last"}],"rowCount":1,"attempts":1}');
  });
});
