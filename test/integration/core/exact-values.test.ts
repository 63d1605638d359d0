/**
 * Every value exact, both ways, on both engines and both surfaces. For each edge value of each type
 * (JSON with big and long numbers, 40-digit numerics, int8 extremes, microsecond timestamps, dates
 * before 1970, bytes, arrays, NULL, unicode) one row holds it as a SQL literal, one is written through
 * the native API's parameters and one through the Data API's; `psql` / the `mariadb` client print all
 * three (they must print the same), and the literal row read back through each surface must say what
 * the client printed, digit for digit. Answers are read from the raw response text (JSON.parse would
 * round the numbers under test).
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactJson, jsonValueSources } from "../../../gateway/engines/json-text.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, MYSQL_ADMIN_URL } from "../../support/mysql.js";
import { ADMIN_URL, createTestDatabase } from "../../support/postgres.js";

const NULL = "<NULL>";
const ARN = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:exact", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:exact" };

/** How a column's printed text and the gateway's answers correspond. */
type Kind = "text" | "json" | "timestamp" | "bytes" | "array" | "bool";

interface ValueCase {
  name: string;
  type: string;
  /** The value as a SQL literal (row 1). */
  literal: string;
  /** The native API parameter as raw JSON text (row 2). */
  native: string;
  /** The Data API SqlParameter's value and typeHint as raw JSON text (row 3), or undefined where the Data API cannot send it. */
  dataApi: string | undefined;
  kind: Kind;
  /** The cast or function the printing client applies (bytes as hex). */
  print?: (column: string) => string;
}

const JSON_DOC = '{"id": 9007199254740993, "big": 12345678901234567890, "long": 3.141592653589793238462643383279, "huge": 1e400, "neg": -0.000000000000000000001}';

const POSTGRES_CASES: ValueCase[] = [
  { name: "jsonb with big and long numbers", type: "jsonb", literal: `'${JSON_DOC}'`, native: JSON_DOC, dataApi: `{"stringValue":${JSON.stringify(JSON_DOC)}},"typeHint":"JSON"`, kind: "json" },
  {
    name: "json kept as written (spacing, key order, repeated keys)",
    type: "json",
    literal: `'{"b": 1.50,  "a": [1e2, 9007199254740993], "a": null}'`,
    native: '{"b": 1.50,  "a": [1e2, 9007199254740993], "a": null}',
    dataApi: `{"stringValue":${JSON.stringify('{"b": 1.50,  "a": [1e2, 9007199254740993], "a": null}')}},"typeHint":"JSON"`,
    kind: "json",
  },
  { name: "numeric with 40 digits", type: "numeric", literal: "1234567890123456789012345678901234.567890", native: '"1234567890123456789012345678901234.567890"', dataApi: '{"stringValue":"1234567890123456789012345678901234.567890"},"typeHint":"DECIMAL"', kind: "text" },
  { name: "int8 maximum", type: "int8", literal: "9223372036854775807", native: '"9223372036854775807"', dataApi: '{"longValue":9223372036854775807}', kind: "text" },
  { name: "int8 minimum", type: "int8", literal: "-9223372036854775808", native: '"-9223372036854775808"', dataApi: '{"longValue":-9223372036854775808}', kind: "text" },
  { name: "timestamp with microseconds", type: "timestamp", literal: "'2024-02-03 04:05:06.123456'", native: '"2024-02-03T04:05:06.123456"', dataApi: '{"stringValue":"2024-02-03 04:05:06.123456"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "timestamptz with microseconds", type: "timestamptz", literal: "'2024-02-03 04:05:06.000001+02'", native: '"2024-02-03T02:05:06.000001Z"', dataApi: '{"stringValue":"2024-02-03 02:05:06.000001"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "timestamp before 1970", type: "timestamp", literal: "'1901-12-13 20:45:52.000001'", native: '"1901-12-13T20:45:52.000001"', dataApi: '{"stringValue":"1901-12-13 20:45:52.000001"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "date before 1970", type: "date", literal: "'1969-07-20'", native: '"1969-07-20"', dataApi: '{"stringValue":"1969-07-20"},"typeHint":"DATE"', kind: "text" },
  { name: "bytes with a zero byte", type: "bytea", literal: "'\\x00ff68656c6c6f'", native: '{"$bytea":"AP9oZWxsbw=="}', dataApi: '{"blobValue":"AP9oZWxsbw=="}', kind: "bytes", print: (c) => `encode(${c}, 'hex')` },
  { name: "int8 array with NULL", type: "int8[]", literal: "'{9223372036854775807,NULL,-1}'", native: '["9223372036854775807", null, -1]', dataApi: undefined, kind: "array" },
  { name: "text array with unicode and commas", type: "text[]", literal: `'{"héllo","日本","a,b"}'`, native: '["héllo", "日本", "a,b"]', dataApi: undefined, kind: "array" },
  { name: "NULL", type: "text", literal: "NULL", native: "null", dataApi: '{"isNull":true}', kind: "text" },
  { name: "unicode text", type: "text", literal: "'Ünïcödé 😀 日本語 \"quoted\"'", native: '"Ünïcödé 😀 日本語 \\"quoted\\""', dataApi: '{"stringValue":"Ünïcödé 😀 日本語 \\"quoted\\""}', kind: "text" },
  { name: "float8", type: "float8", literal: "0.1", native: "0.1", dataApi: '{"doubleValue":0.1}', kind: "text" },
  { name: "boolean", type: "bool", literal: "true", native: "true", dataApi: '{"booleanValue":true}', kind: "bool" },
];

const MYSQL_JSON_DOC = '{"id": 9007199254740993, "big": 12345678901234567890, "long": 3.141592653589793238462643383279, "neg": -1e-21}';

const MYSQL_CASES: ValueCase[] = [
  { name: "JSON with big and long numbers", type: "json", literal: `'${MYSQL_JSON_DOC}'`, native: MYSQL_JSON_DOC, dataApi: `{"stringValue":${JSON.stringify(MYSQL_JSON_DOC)}},"typeHint":"JSON"`, kind: "json" },
  { name: "DECIMAL with 40 digits", type: "decimal(40,6)", literal: "1234567890123456789012345678901234.567890", native: '"1234567890123456789012345678901234.567890"', dataApi: '{"stringValue":"1234567890123456789012345678901234.567890"},"typeHint":"DECIMAL"', kind: "text" },
  { name: "BIGINT maximum", type: "bigint", literal: "9223372036854775807", native: '"9223372036854775807"', dataApi: '{"longValue":9223372036854775807}', kind: "text" },
  { name: "BIGINT minimum", type: "bigint", literal: "-9223372036854775808", native: '"-9223372036854775808"', dataApi: '{"longValue":-9223372036854775808}', kind: "text" },
  { name: "BIGINT UNSIGNED maximum", type: "bigint unsigned", literal: "18446744073709551615", native: '"18446744073709551615"', dataApi: '{"stringValue":"18446744073709551615"}', kind: "text" },
  { name: "DATETIME with microseconds", type: "datetime(6)", literal: "'2024-02-03 04:05:06.123456'", native: '"2024-02-03 04:05:06.123456"', dataApi: '{"stringValue":"2024-02-03 04:05:06.123456"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "TIMESTAMP with microseconds", type: "timestamp(6) null", literal: "'2024-02-03 04:05:06.000001'", native: '"2024-02-03 04:05:06.000001"', dataApi: '{"stringValue":"2024-02-03 04:05:06.000001"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "DATETIME before 1970", type: "datetime(6)", literal: "'1901-12-13 20:45:52.000001'", native: '"1901-12-13 20:45:52.000001"', dataApi: '{"stringValue":"1901-12-13 20:45:52.000001"},"typeHint":"TIMESTAMP"', kind: "timestamp" },
  { name: "DATE before 1970", type: "date", literal: "'1969-07-20'", native: '"1969-07-20"', dataApi: '{"stringValue":"1969-07-20"},"typeHint":"DATE"', kind: "text" },
  { name: "bytes with a zero byte", type: "varbinary(16)", literal: "x'00ff68656c6c6f'", native: '{"$bytea":"AP9oZWxsbw=="}', dataApi: '{"blobValue":"AP9oZWxsbw=="}', kind: "bytes", print: (c) => `lower(hex(${c}))` },
  { name: "NULL", type: "text", literal: "NULL", native: "null", dataApi: '{"isNull":true}', kind: "text" },
  { name: "unicode text", type: "text", literal: "'Ünïcödé 😀 日本語 \"quoted\"'", native: '"Ünïcödé 😀 日本語 \\"quoted\\""', dataApi: '{"stringValue":"Ünïcödé 😀 日本語 \\"quoted\\""}', kind: "text" },
  { name: "DOUBLE", type: "double", literal: "0.1", native: "0.1", dataApi: '{"doubleValue":0.1}', kind: "text" },
];

/** The raw JSON text of every value at `path` + [index] in `text`, in order. */
function rawValues(text: string, path: readonly (string | number)[]): string[] {
  const found: string[] = [];
  jsonValueSources(
    text,
    (at) => at.length === path.length + 1 && path.every((key, i) => at[i] === key),
    (_at, source) => found.push(source),
  );
  return found;
}

/** A native API value's raw JSON text as the client prints the same value. */
function nativeAsPrinted(kind: Kind, raw: string): string {
  if (raw === "null") return NULL;
  switch (kind) {
    case "json":
      return raw;
    case "timestamp":
      return (JSON.parse(raw) as string).replace("T", " ").replace(/Z$/, "");
    case "bytes":
      return Buffer.from(JSON.parse(raw) as string, "base64").toString("hex");
    case "array":
      return JSON.stringify(rawValues(raw, []).map((element) => (element.startsWith('"') ? (JSON.parse(element) as string) : element === "null" ? NULL : element)));
    case "bool":
      return raw === "true" ? "t" : "f";
    default:
      return raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
}

/** A Data API Field's raw JSON text as the client prints the same value (JSON compacted, as the service sends it). */
function fieldAsPrinted(kind: Kind, field: string, engine: "postgres" | "mysql"): string {
  const [member] = Object.keys(JSON.parse(field) as object);
  const raw = rawValues(field, [])[0] ?? "";
  switch (member) {
    case "isNull":
      return NULL;
    case "longValue":
    case "doubleValue":
      return raw;
    case "booleanValue":
      return engine === "postgres" ? (raw === "true" ? "t" : "f") : raw === "true" ? "1" : "0";
    case "blobValue":
      return Buffer.from(JSON.parse(raw) as string, "base64").toString("hex");
    case "arrayValue": {
      // {"longValues":[...]}: the one member's elements, as written.
      const list = rawValues(raw, [])[0] ?? "[]";
      return JSON.stringify(rawValues(list, []).map((element) => (element === "null" ? NULL : element.startsWith('"') ? (JSON.parse(element) as string) : element)));
    }
    default:
      return JSON.parse(raw) as string;
  }
}

/** The printed text normalised the way each kind is compared. */
function printedFor(kind: Kind, printed: string, surface: "native" | "dataApi"): string {
  if (printed === NULL) return NULL;
  if (kind === "timestamp") return printed.replace(/\+00$/, "");
  if (kind === "json" && surface === "dataApi") return compactJson(printed);
  return printed;
}

interface EngineUnderTest {
  engine: "postgres" | "mysql";
  cases: ValueCase[];
  setup(): Promise<{ url: string; run(sql: string): Promise<void>; print(sql: string): string[][]; drop(): Promise<void> }>;
}

const ENGINES: EngineUnderTest[] = [
  {
    engine: "postgres",
    cases: POSTGRES_CASES,
    async setup() {
      const db = await createTestDatabase();
      const admin = new URL(ADMIN_URL);
      return {
        url: db.url,
        run: async (sql) => void (await db.admin.query(sql)),
        print: (sql) => {
          const out = execFileSync("psql", ["-X", "-A", "-t", "-q", "-F", "\x1f", "-R", "\x1e", "-P", `null=${NULL}`, "-h", admin.hostname, "-p", admin.port || "5432", "-U", admin.username || "postgres", "-d", db.name, "-c", sql], {
            encoding: "utf8",
            env: { ...process.env, PGTZ: "UTC" },
          });
          const records = out.endsWith("\n") ? out.slice(0, -1) : out;
          return (records.endsWith("\x1e") ? records.slice(0, -1) : records).split("\x1e").map((line) => line.split("\x1f"));
        },
        drop: () => db.drop(),
      };
    },
  },
  {
    engine: "mysql",
    cases: MYSQL_CASES,
    async setup() {
      const db = await createTestMysqlDatabase();
      const admin = new URL(MYSQL_ADMIN_URL);
      return {
        url: db.url,
        run: async (sql) => void (await db.query(sql)),
        print: (sql) => {
          const out = execFileSync(
            "mariadb",
            ["-N", "-B", "-r", "-h", admin.hostname, "-P", admin.port || "3306", "-u", admin.username || "root", "--default-character-set=utf8mb4", "--init-command=SET time_zone='+00:00'", db.name, "-e", sql],
            { encoding: "utf8" },
          );
          return out
            .replace(/\n$/, "")
            .split("\n")
            .map((line) => line.split("\t").map((value) => (value === "NULL" ? NULL : value)));
        },
        drop: () => db.drop(),
      };
    },
  },
];

for (const target of ENGINES) {
  describe(`exact values on ${target.engine}`, () => {
    let gw: TestGateway;
    let database: Awaited<ReturnType<EngineUnderTest["setup"]>>;
    /** Printed rows 1 (literal), 2 (native API), 3 (Data API); one column per case. */
    let printed: string[][];
    const columns = target.cases.map((_, i) => `c${i}`);
    const quote = (name: string) => (target.engine === "postgres" ? `"${name}"` : `\`${name}\``);

    const post = async (path: string, body: string): Promise<string> => {
      const response = await fetch(gw.baseUrl + path, { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
      return text;
    };

    beforeAll(async () => {
      database = await target.setup();
      gw = await startTestGateway({ clusters: { default: { writerUrl: database.url } } });
      await database.run(`create table exact (id int primary key, ${target.cases.map((c, i) => `${quote(columns[i] ?? "")} ${c.type}`).join(", ")})`);
      await database.run(`insert into exact values (1, ${target.cases.map((c) => c.literal).join(", ")})`);
      // Row 2: the native API, parameters as the caller writes them (the body built as text: JSON.stringify could not write them).
      const placeholders = target.cases.map((_, i) => (target.engine === "postgres" ? `$${i + 1}` : "?"));
      await post("/v1/query", `{"sql":${JSON.stringify(`insert into exact values (2, ${placeholders.join(", ")})`)},"params":[${target.cases.map((c) => c.native).join(",")}]}`);
      // Row 3: the Data API, as its clients send Fields (raw 64-bit longValues included).
      const named = target.cases.map((c, i) => (c.dataApi === undefined ? "NULL" : `:p${i}`));
      const parameters = target.cases.flatMap((c, i) => (c.dataApi === undefined ? [] : [`{"name":"p${i}","value":${c.dataApi}}`]));
      await post("/Execute", `{"resourceArn":"${ARN.resourceArn}","secretArn":"${ARN.secretArn}","sql":${JSON.stringify(`insert into exact values (3, ${named.join(", ")})`)},"parameters":[${parameters.join(",")}]}`);
      printed = database.print(`select ${target.cases.map((c, i) => (c.print ? c.print(quote(columns[i] ?? "")) : quote(columns[i] ?? ""))).join(", ")} from exact order by id`);
    });

    afterAll(async () => {
      await gw?.stop();
      await database?.drop();
    });

    it("stores what each surface's parameters say, as the command-line client prints it", () => {
      expect(printed).toHaveLength(3);
      const [literal, native, dataApi] = printed as [string[], string[], string[]];
      target.cases.forEach((c, i) => {
        expect({ case: c.name, native: native[i] }).toEqual({ case: c.name, native: literal[i] });
        if (c.dataApi !== undefined) expect({ case: c.name, dataApi: dataApi[i] }).toEqual({ case: c.name, dataApi: literal[i] });
      });
    });

    it("reads every value back through the native API digit for digit", async () => {
      const body = await post("/v1/query", JSON.stringify({ sql: `select ${columns.map(quote).join(", ")} from exact where id = 1`, rowMode: "array" }));
      const values = rawValues(body, ["rows", 0]);
      const literal = printed[0] ?? [];
      target.cases.forEach((c, i) => {
        const expected = c.kind === "array" ? JSON.stringify(pgArrayAsList(literal[i] ?? "")) : printedFor(c.kind, literal[i] ?? "", "native");
        expect({ case: c.name, value: nativeAsPrinted(c.kind, values[i] ?? "") }).toEqual({ case: c.name, value: expected });
      });
    });

    it("reads every value back through the Data API as the service answers it, digit for digit", async () => {
      const body = await post("/Execute", JSON.stringify({ ...ARN, sql: `select ${columns.map(quote).join(", ")} from exact where id = 1` }));
      const fields = rawValues(body, ["records", 0]);
      const literal = printed[0] ?? [];
      target.cases.forEach((c, i) => {
        const expected = c.kind === "array" ? JSON.stringify(pgArrayAsList(literal[i] ?? "")) : printedFor(c.kind, literal[i] ?? "", "dataApi");
        expect({ case: c.name, value: fieldAsPrinted(c.kind, fields[i] ?? "", target.engine) }).toEqual({ case: c.name, value: expected });
      });
    });
  });
}

/** psql's one-dimensional array text as a list of element texts ({a,"b c",NULL} -> ["a", "b c", NULL]). */
function pgArrayAsList(text: string): string[] {
  const inner = text.slice(1, -1);
  const elements: string[] = [];
  let i = 0;
  while (i < inner.length) {
    if (inner[i] === '"') {
      let value = "";
      i++;
      while (i < inner.length && inner[i] !== '"') {
        if (inner[i] === "\\") i++;
        value += inner[i] ?? "";
        i++;
      }
      elements.push(value);
      i += 2;
    } else {
      const end = inner.indexOf(",", i);
      const value = inner.slice(i, end < 0 ? inner.length : end);
      elements.push(value === "NULL" ? NULL : value);
      i = end < 0 ? inner.length : end + 1;
    }
  }
  return elements;
}
