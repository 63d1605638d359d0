import { describe, expect, it } from "vitest";
import { JsonText, withJsonSource } from "../json-text.js";
import { TypedParam } from "../typed-param.js";
import { encodeParam, parsersFor } from "./values.js";

const parse = (oid: number, text: string, mode: "string" | "number" = "string") =>
  (parsersFor(mode, [{ dataTypeID: oid }])[0] as (t: string) => unknown)(text);

describe("PostgreSQL values to JSON", () => {
  it("keeps int8 and numeric exact unless numbers are asked for", () => {
    expect(parse(20, "9007199254740993")).toBe("9007199254740993");
    expect(parse(1700, "1.10")).toBe("1.10");
    expect(parse(20, "42", "number")).toBe(42);
    expect(parse(1700, "NaN", "number")).toBe("NaN");
  });

  it("turns timestamps into ISO-8601 and leaves infinity and BC dates as printed", () => {
    expect(parse(1184, "2024-02-03 04:05:06.5+00")).toBe("2024-02-03T04:05:06.5Z");
    expect(parse(1184, "2024-02-03 04:05:06+05:30")).toBe("2024-02-03T04:05:06+05:30");
    expect(parse(1184, "2024-02-03 04:05:06-08")).toBe("2024-02-03T04:05:06-08:00");
    expect(parse(1114, "2024-02-03 04:05:06")).toBe("2024-02-03T04:05:06");
    expect(parse(1184, "infinity")).toBe("infinity");
    expect(parse(1114, "0044-03-15 00:00:00 BC")).toBe("0044-03-15 00:00:00 BC");
  });

  it("converts bytea to base64, keeps json as the server's text, arrays to arrays, and keeps non-finite floats", () => {
    expect(parse(17, "\\x68656c6c6f")).toBe("aGVsbG8=");
    expect(parse(3802, '{"id": 9007199254740993, "huge": 1e400}')).toEqual(new JsonText('{"id": 9007199254740993, "huge": 1e400}'));
    expect(parse(3807, '{"{\\"a\\": 1.50}",NULL}')).toEqual([new JsonText('{"a": 1.50}'), null]);
    expect(parse(1007, "{1,2,NULL}")).toEqual([1, 2, null]);
    expect(parse(1009, '{a,"b c"}')).toEqual(["a", "b c"]);
    expect(parse(1016, "{1,2}")).toEqual(["1", "2"]);
    expect(parse(701, "Infinity")).toBe("Infinity");
    expect(parse(16, "t")).toBe(true);
    expect(parse(2950, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")).toBe("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  });

  it("leaves unknown types as text, and parses arrays of types learned by name", () => {
    expect(parse(99999, "{x}")).toBe("{x}");
    const learned = new Map([[99999, "_mood"]]);
    expect((parsersFor("string", [{ dataTypeID: 99999 }], learned)[0] as (t: string) => unknown)("{ok,sad}")).toEqual(["ok", "sad"]);
  });
});

describe("JSON parameters to PostgreSQL", () => {
  it("binds scalars as text, objects as JSON, arrays as array literals and $bytea as bytes", () => {
    expect(encodeParam(null)).toBeNull();
    expect(encodeParam(true)).toBe("true");
    expect(encodeParam(1.5)).toBe("1.5");
    expect(encodeParam("x")).toBe("x");
    expect(encodeParam({ a: 1 })).toBe('{"a":1}');
    expect(encodeParam([1, null, 'say "hi"', "back\\slash", [2, 3]])).toBe('{"1",NULL,"say \\"hi\\"","back\\\\slash",{"2","3"}}');
    expect(encodeParam({ $bytea: "aGVsbG8=" })).toEqual(Buffer.from("hello"));
  });

  it("binds objects and arrays from the caller's own JSON text, and $json text as it is", () => {
    expect(encodeParam(withJsonSource({ id: 9007199254740992 }, '{"id": 9007199254740993}'))).toBe('{"id": 9007199254740993}');
    expect(encodeParam(withJsonSource([9007199254740992, [1.5], null, "a\"b", { x: 1 }], '[9007199254740993, [1.50], null, "a\\"b", {"x": 1.0}]'))).toBe(
      '{"9007199254740993",{"1.50"},NULL,"a\\"b","{\\"x\\": 1.0}"}',
    );
    expect(encodeParam({ $json: '{"big": 12345678901234567890}' })).toBe('{"big": 12345678901234567890}');
  });

  it("binds typed parameters (the Data API's longValue and doubleValue) as their text", () => {
    expect(encodeParam(new TypedParam("int8", "9223372036854775807") as never)).toBe("9223372036854775807");
    expect(encodeParam(new TypedParam("float8", 2) as never)).toBe("2");
    expect(encodeParam(new TypedParam("float8", "NaN") as never)).toBe("NaN");
  });
});
