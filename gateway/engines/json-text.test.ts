import { describe, expect, it } from "vitest";
import { compactJson, jsonArrayElements, jsonValueSources } from "./json-text.js";

function sources(text: string, wanted: (path: readonly (string | number)[]) => boolean): [string, string][] {
  const found: [string, string][] = [];
  jsonValueSources(text, wanted, (path, source) => found.push([JSON.stringify(path), source]));
  return found;
}

describe("JSON source text", () => {
  it("finds each parameter's own text, digits and spacing as the caller wrote them", () => {
    const body = '{"sql": "select $1", "params": [ {"id": 9007199254740993, "s": "x]}\\"y"} , 1.50, [1, [2]], null, "t" ]}';
    expect(sources(body, (path) => path.length === 2 && path[0] === "params")).toEqual([
      ['["params",0]', '{"id": 9007199254740993, "s": "x]}\\"y"}'],
      ['["params",1]', "1.50"],
      ['["params",2]', "[1, [2]]"],
      ['["params",3]', "null"],
      ['["params",4]', '"t"'],
    ]);
  });

  it("reaches nested lists, escaped keys, and reports repeated keys in order (JSON.parse keeps the last)", () => {
    const body = '{"statements":[{"sql":"a","params":[{"a":1}]},{"sql":"b","par\\u0061ms":[[1e400]]}],"statements":[{"params":[{"b":2}]}]}';
    expect(sources(body, (path) => path.length === 4 && path[0] === "statements" && path[2] === "params")).toEqual([
      ['["statements",0,"params",0]', '{"a":1}'],
      ['["statements",1,"params",0]', "[1e400]"],
      ['["statements",0,"params",0]', '{"b":2}'],
    ]);
  });

  it("splits an array's text into its elements' texts", () => {
    expect(jsonArrayElements('[ 1 , "a,b" , [2, 3], {"k": [4]}, true ]')).toEqual(["1", '"a,b"', "[2, 3]", '{"k": [4]}', "true"]);
    expect(jsonArrayElements("[]")).toEqual([]);
  });

  it("compacts JSON without touching strings or numbers", () => {
    expect(compactJson('{"a": 1.50, "b": [1, 2], "c": "x  y", "d": {"e": 12345678901234567890}}')).toBe(
      '{"a":1.50,"b":[1,2],"c":"x  y","d":{"e":12345678901234567890}}',
    );
    expect(compactJson('"a \\" b"')).toBe('"a \\" b"');
  });
});
