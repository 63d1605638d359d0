/**
 * fast-check arbitraries for fuzzing both HTTP surfaces of the gateway (test/integration/security/fuzz-http.test.ts):
 * requests as a buggy client or an attacker sends them. Most are well aimed — known routes, a valid
 * token, bodies near the schema with SQL that runs — so they reach the pools and the database; the rest
 * are garbage: wrong methods and paths, bad headers, non-JSON, deep nesting, bodies over the limit.
 *
 * Bodies are JSON text with placeholders, resolved by `materialize` when the request is sent, so that a
 * shrunk counterexample stays short and readable:
 *   @@tx@@                  the id of a transaction the run began recently (live commits, statements in it)
 *   "@@num:<text>@@"        a JSON number JSON.stringify cannot write (-0, 9007199254740993, 1e400)
 *   "@@deep:<kind>:<n>@@"   n levels of nesting: arrays, objects or Data API arrayValues
 *   "@@huge:<n>@@"          a string of n characters
 */
import fc from "fast-check";

export type Engine = "postgres" | "mysql";
export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface FuzzTokens {
  /** read-write on the cluster */
  writer: string;
  /** read-only on the cluster */
  reader: string;
  /** admin (operator routes), no cluster grant */
  operator: string;
}

export interface FuzzRequest {
  method: Method;
  /** Path and query, possibly with @@tx@@. */
  path: string;
  headers: Record<string, string>;
  /** JSON-ish text with placeholders, raw bytes, or no body at all. */
  body: string | Uint8Array | undefined;
}

export const RESOURCE_ARN = "arn:aws:rds:us-east-1:123456789012:cluster:fuzz";
export const SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:fuzz";
const DATA_API_PATHS = ["/Execute", "/BatchExecute", "/BeginTransaction", "/CommitTransaction", "/RollbackTransaction", "/ExecuteSql"];
const NATIVE_PATHS = ["/v1/query", "/v1/batch", "/v1/transactions", "/v1/transactions/@@tx@@/commit", "/v1/transactions/@@tx@@/rollback"];
const OPERATOR_PATHS = ["/healthz", "/readyz", "/openapi.json", "/v1/admin/topology", "/v1/admin/topology/refresh", "/metrics", "/v1/admin/status", "/"];
const TX = "@@tx@@";

// ---------------------------------------------------------------------------------------------------
// Placeholders

const num = (text: string): string => `@@num:${text}@@`;
const deep = (kind: "arrays" | "objects" | "arrayValues", depth: number): string => `@@deep:${kind}:${depth}@@`;
const huge = (length: number): string => `@@huge:${length}@@`;

function nested(kind: string, depth: number): string {
  if (kind === "arrays") return "[".repeat(depth) + "]".repeat(depth);
  if (kind === "objects") return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  return '{"arrayValues":['.repeat(depth) + '{"longValues":[1]}' + "]}".repeat(depth);
}

/** The request as it goes on the wire: placeholders replaced, the transaction id one of `transactionIds`. */
export function materialize(request: FuzzRequest, transactionIds: readonly string[], pick: number): FuzzRequest {
  const tx = transactionIds.length === 0 ? "00000000-0000-4000-8000-000000000000" : (transactionIds[pick % transactionIds.length] as string);
  const body =
    typeof request.body !== "string"
      ? request.body
      : request.body
          .replaceAll(TX, tx)
          .replace(/"@@num:([^@"]+)@@"/g, "$1")
          .replace(/"@@deep:(\w+):(\d+)@@"/g, (_all, kind: string, depth: string) => nested(kind, Number(depth)))
          .replace(/"@@huge:(\d+)@@"/g, (_all, length: string) => JSON.stringify("x".repeat(Number(length) - 1) + "é"));
  return { ...request, path: request.path.replaceAll(TX, tx), body };
}

/** Which error format applies: the Data API's for POSTs to its paths, the native one for everything else. */
export function surfaceOf(request: Pick<FuzzRequest, "method" | "path">): "native" | "data-api" {
  const path = request.path.split("?")[0] ?? "";
  return request.method === "POST" && DATA_API_PATHS.includes(path) ? "data-api" : "native";
}

// ---------------------------------------------------------------------------------------------------
// Values

/** Mostly absent: optional request members appear in about one request in `1 + absentWeight`. */
function rarely<T>(arbitrary: fc.Arbitrary<T>, absentWeight = 3): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

const edgyChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\ud800", "\udfff", "\ufeff", "\u202e", "\u2028", "é", "😀", "'", '"', "\\", ";", "$1", ":v", "?", "%", "\n") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
const edgyString = fc.string({ unit: edgyChar, maxLength: 24 });
const hugeString = fc.integer({ min: 1000, max: 70_000 }).map(huge);
const anyString = fc.oneof({ weight: 8, arbitrary: edgyString }, { weight: 1, arbitrary: hugeString });

const rawNumber = fc
  .constantFrom("-0", "9007199254740993", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e400", "-1e400", "1e-400", "1234567890123456.5", "1E2")
  .map(num);
const edgeNumber = fc.oneof(
  fc.constantFrom(0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e308, -1e308, 5e-324, 0.5, -1.5),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  rawNumber,
);
const numberLikeString = fc.constantFrom("NaN", "Infinity", "-Infinity", "1e308", "12345678901234567890.123", "-0", "0x10", "", " 1");
const scalar = fc.oneof(fc.constant(null), fc.boolean(), edgeNumber, edgyString);
const base64 = fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString("base64"));
const badBase64 = fc.constantFrom("not base64!", "abc", "====", "YQ", "Zm9v\n", "Zm9v====", "😀", "");
const deepValue = fc.tuple(fc.constantFrom("arrays" as const, "objects" as const), fc.integer({ min: 100, max: 30_000 })).map(([kind, depth]) => deep(kind, depth));

/** A native statement parameter: every kind the schema names, valid or not. */
const paramValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: base64.map(($bytea) => ({ $bytea })) },
  { weight: 1, arbitrary: fc.oneof(badBase64.map(($bytea) => ({ $bytea })), base64.map(($bytea) => ({ $bytea, extra: 1 })), fc.constant({ $bytea: 5 })) },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.array(fc.oneof(fc.integer(), fc.constant(null)), { maxLength: 3 }), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), scalar, { maxKeys: 3 }) },
  { weight: 1, arbitrary: deepValue },
);
const params = fc.oneof(
  { weight: 8, arbitrary: fc.array(paramValue, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 49, max: 60 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
  { weight: 1, arbitrary: fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })) },
);

// ---------------------------------------------------------------------------------------------------
// Data API Field values

const arrayValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ longValues: fc.array(fc.oneof(fc.integer(), fc.constant(null)), { maxLength: 3 }) }),
  fc.record({ stringValues: fc.array(fc.oneof(edgyString, fc.constant(null)), { maxLength: 3 }) }),
  fc.record({ doubleValues: fc.array(fc.oneof(fc.double(), numberLikeString), { maxLength: 3 }) }),
  fc.record({ booleanValues: fc.array(fc.boolean(), { maxLength: 3 }) }),
  fc.record({ arrayValues: fc.array(fc.record({ longValues: fc.array(fc.integer(), { maxLength: 2 }) }), { maxLength: 2 }) }),
  fc.record({ longValues: fc.array(fc.oneof(fc.double(), edgyString), { minLength: 1, maxLength: 2 }) }),
  fc.integer({ min: 100, max: 8000 }).map((depth) => deep("arrayValues", depth)),
);

/** Every Field variant, valid and not: none or two members, wrong types, numbers at the edges. */
const field: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant({ isNull: true }),
  fc.constantFrom({ isNull: false }, {}, { stringValue: null }, { stringValue: "a", longValue: 1 }),
  fc.boolean().map((booleanValue) => ({ booleanValue })),
  fc.oneof(fc.integer(), rawNumber, fc.constantFrom("42", "-9223372036854775808", "99999999999999999999", "1.5"), fc.double()).map((longValue) => ({ longValue })),
  fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), rawNumber, numberLikeString).map((doubleValue) => ({ doubleValue })),
  anyString.map((stringValue) => ({ stringValue })),
  fc.oneof(base64, badBase64).map((blobValue) => ({ blobValue })),
  arrayValue.map((value) => ({ arrayValue: value })),
);
const parameterName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom("v", "a", "b", "id", "name", "qty", "note", "j", "1") }, { weight: 1, arbitrary: fc.constantFrom("", "a-b", "ü", "a b", ":a") });
const typeHint = fc.constantFrom("DATE", "DECIMAL", "JSON", "TIME", "TIMESTAMP", "UUID", "date", "JSONB", "", 5);
const sqlParameter: fc.Arbitrary<unknown> = fc.record({ name: parameterName, value: field, typeHint: rarely(typeHint) });

// ---------------------------------------------------------------------------------------------------
// SQL: a small set that runs against the fixture tables (fuzz_items, fuzz_log), plus mutations

/** A statement with `:name` slots; native requests get $n (PostgreSQL) or ? (MySQL) in their place. */
interface Template {
  text: string;
  /** Relative frequency (default 4). */
  weight?: number;
  slots?: Record<string, fc.Arbitrary<unknown>>;
  hints?: Record<string, string>;
}

const int = fc.oneof(fc.integer({ min: -5, max: 50 }), fc.constantFrom(2 ** 31 - 1, -(2 ** 31)));
const text = fc.oneof(fc.constantFrom("a", "b", "widget"), edgyString);
const jsonText = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value));
const bytes = base64.map(($bytea) => ({ $bytea }));

const COMMON_SQL = ["select 1 as one", "select * from fuzz_items order by id limit 5", "select 1; select 2", "begin", "commit", "rollback", "savepoint s1", "release savepoint s1", "select 1/0", "select * from no_such_table", "select * from fuzz_items for update", "truncate fuzz_log"];

const POSTGRES_TEMPLATES: Template[] = [
  ...COMMON_SQL.map((sql) => ({ text: sql })),
  { text: "select :v::text as v", slots: { v: text } },
  { text: "select :a::int + :b::int as sum", slots: { a: int, b: int } },
  { text: "select :n::numeric as n, :b::int8 as big", slots: { n: fc.constantFrom("1.5", "NaN", "1e400", "12345678901234567890.5"), b: fc.constantFrom("9007199254740993", "-9223372036854775808", "x") } },
  { text: "select :j::jsonb as j", slots: { j: jsonText }, hints: { j: "JSON" } },
  { text: "select :b::bytea as b", slots: { b: bytes } },
  { text: "select :a::int[] as a", slots: { a: fc.array(fc.oneof(int, fc.constant(null)), { maxLength: 4 }) } },
  { text: "select :d as d, :t as t", slots: { d: fc.constantFrom("2024-02-03", "2024-02-30", "x"), t: fc.constantFrom("2024-02-03 04:05:06", "24:00:00") }, hints: { d: "DATE", t: "TIMESTAMP" } },
  { text: "select :u as u", slots: { u: fc.constantFrom("6e8bc430-9c3a-11d9-9669-0800200c9a66", "nope") }, hints: { u: "UUID" } },
  { text: "select * from fuzz_items where id = :id", slots: { id: int } },
  { text: "insert into fuzz_items (name, qty) values (:name, :qty) returning id", slots: { name: text, qty: int } },
  { text: "update fuzz_items set qty = qty + 1 where id = :id", slots: { id: int } },
  { text: "delete from fuzz_items where id = :id", slots: { id: int } },
  { text: "insert into fuzz_log (note, data, payload) values (:note, :data::jsonb, :payload)", slots: { note: anyString, data: jsonText, payload: bytes } },
  { text: "select now() as at, current_date as d, interval '1 day' as i, 'NaN'::float8 as f, 12345678901234567890::numeric as n, null as nothing" },
  { text: "values (1, 'a'), (2, 'b')" },
  { text: "table fuzz_items" },
  { text: "show server_version" },
  { text: "select generate_series(1, 5000) as n" },
  { text: "select repeat('x', 700000) as a, repeat('y', 700000) as b" },
  { text: "select pg_sleep(0.02)" },
  { text: "with w as (insert into fuzz_log (note) values ('cte') returning id) select * from w" },
  { text: "select nextval('fuzz_log_id_seq')" },
  { text: "set statement_timeout = 50" },
  { text: "reset all" },
  { text: "lock table fuzz_items in exclusive mode" },
  { text: "create temp table scratch (x int)" },
  { text: "prepare p as select 1" },
  { text: "declare c cursor for select 1" },
  { text: "listen fuzz_channel" },
  { text: "notify fuzz_channel, 'x'" },
  { text: "select pg_advisory_lock(42)" },
  { text: "select pg_try_advisory_lock(7)" },
  { text: "select pg_advisory_unlock_all()" },
  { text: "copy fuzz_items to stdout" },
  { text: "copy fuzz_log (note) from stdin" },
  { text: "vacuum fuzz_log" },
  { text: "do $$ begin perform pg_sleep(0.01); end $$" },
  // Rare: each one costs the pool a connection and the gateway its retries.
  { text: "select pg_terminate_backend(pg_backend_pid())", weight: 1 },
];

const MYSQL_TEMPLATES: Template[] = [
  ...COMMON_SQL.map((sql) => ({ text: sql })),
  { text: "select :v as v", slots: { v: text } },
  { text: "select :a + :b as sum", slots: { a: int, b: int } },
  { text: "select cast(:n as decimal(30, 10)) as n, :b as big", slots: { n: fc.constantFrom("1.5", "NaN", "12345678901234567890.5"), b: fc.constantFrom("9007199254740993", "x") } },
  { text: "select json_valid(:j) as ok", slots: { j: jsonText }, hints: { j: "JSON" } },
  { text: "select hex(:b) as h", slots: { b: bytes } },
  { text: "select :d as d, :t as t", slots: { d: fc.constantFrom("2024-02-03", "2024-02-30"), t: fc.constantFrom("2024-02-03 04:05:06", "24:00:00") }, hints: { d: "DATE", t: "TIMESTAMP" } },
  { text: "select * from fuzz_items where id = :id", slots: { id: int } },
  { text: "insert into fuzz_items (name, qty) values (:name, :qty)", slots: { name: text, qty: int } },
  { text: "update fuzz_items set qty = qty + 1 where id = :id", slots: { id: int } },
  { text: "delete from fuzz_items where id = :id", slots: { id: int } },
  { text: "insert into fuzz_log (note, data, payload) values (:note, :data, :payload)", slots: { note: anyString, data: jsonText, payload: bytes } },
  { text: "select now() as at, curdate() as d, 12345678901234567890 as n, b'1' as bit1, null as nothing" },
  { text: "show variables like 'version'" },
  { text: "select seq from seq_1_to_5000" },
  { text: "select repeat('x', 700000) as a, repeat('y', 700000) as b" },
  { text: "select sleep(0.02)" },
  { text: "start transaction read only" },
  { text: "set @x = 1" },
  { text: "set session max_statement_time = 0.05" },
  { text: "lock tables fuzz_items write" },
  { text: "unlock tables" },
  { text: "create temporary table scratch (x int)" },
  { text: "prepare p from 'select 1'" },
  { text: "select get_lock('fuzz', 0)" },
  { text: "select release_all_locks()" },
  { text: "analyze table fuzz_items" },
  { text: "load data local infile '/etc/hostname' into table fuzz_log (note)" },
];

const SLOT = /(?<!:):([A-Za-z_]\w*)/g;

interface Statement {
  /** Native SQL ($n or ?) and its params. */
  sql: string;
  /** An array, or (wrong parameters) any value. */
  params: unknown;
  /** The same statement as the Data API writes it. */
  dataSql: string;
  parameters: unknown[];
}

function statementFrom(template: Template, engine: Engine): fc.Arbitrary<Statement> {
  const names = [...new Set([...template.text.matchAll(SLOT)].map((match) => match[1] as string))];
  const values = fc.record(template.slots ?? {}) as fc.Arbitrary<Record<string, unknown>>;
  return values.map((byName) => {
    const sql = template.text.replace(SLOT, (_all, name: string) => (engine === "postgres" ? `$${names.indexOf(name) + 1}` : "?"));
    const order = engine === "postgres" ? names : [...template.text.matchAll(SLOT)].map((match) => match[1] as string);
    const parameters = names.map((name) => {
      const hint = template.hints?.[name];
      return { name, value: toField(byName[name]), ...(hint === undefined ? {} : { typeHint: hint }) };
    });
    return { sql, params: order.map((name) => byName[name]), dataSql: template.text, parameters };
  });
}

/** A native parameter as a Data API Field. */
function toField(value: unknown): unknown {
  if (value === null || value === undefined) return { isNull: true };
  if (typeof value === "boolean") return { booleanValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { longValue: value } : { doubleValue: value };
  if (typeof value === "string") return { stringValue: value };
  if (Array.isArray(value)) return { arrayValue: { longValues: value } };
  if (typeof value === "object" && "$bytea" in value) return { blobValue: value.$bytea };
  return { stringValue: JSON.stringify(value) };
}

const MUTATIONS = ["truncate", "insert", "delete", "chain", "upper", "comment", "quote"] as const;

function mutate(sql: string, mutation: (typeof MUTATIONS)[number], at: number, junk: string, other: string): string {
  const i = at % (sql.length + 1);
  switch (mutation) {
    case "truncate":
      return sql.slice(0, i);
    case "insert":
      return sql.slice(0, i) + junk + sql.slice(i);
    case "delete":
      return sql.slice(0, i) + sql.slice(i + 1);
    case "chain":
      return `${sql}; ${other}`;
    case "upper":
      return sql.toUpperCase();
    case "comment":
      return `/* ${sql}`;
    case "quote":
      return sql.slice(0, i) + "'" + sql.slice(i);
  }
}

/** Valid statements mostly; then mutated ones, garbage, and valid SQL with the wrong parameters. */
function statementArbitrary(engine: Engine): fc.Arbitrary<Statement> {
  const templates = engine === "postgres" ? POSTGRES_TEMPLATES : MYSQL_TEMPLATES;
  const valid = fc.oneof(...templates.map((template) => ({ weight: template.weight ?? 4, arbitrary: statementFrom(template, engine) })));
  const mutated = fc
    .tuple(valid, fc.constantFrom(...MUTATIONS), fc.nat(), edgyString, valid)
    .map(([statement, mutation, at, junk, other]) => ({
      ...statement,
      sql: mutate(statement.sql, mutation, at, junk, other.sql),
      dataSql: mutate(statement.dataSql, mutation, at, junk, other.dataSql),
    }));
  const garbage = fc.oneof(edgyString, fc.string({ unit: "binary", minLength: 1, maxLength: 40 })).map((sql) => ({ sql, params: [], dataSql: sql, parameters: [] }));
  const wrongParams = fc.tuple(valid, params, fc.array(sqlParameter, { maxLength: 4 })).map(([statement, wrong, parameters]) => ({ ...statement, params: wrong, parameters }));
  return fc.oneof({ weight: 10, arbitrary: valid }, { weight: 3, arbitrary: mutated }, { weight: 1, arbitrary: garbage }, { weight: 2, arbitrary: wrongParams });
}

// ---------------------------------------------------------------------------------------------------
// Request members

const timeoutMs = fc.oneof({ weight: 2, arbitrary: fc.integer({ min: 1, max: 2000 }) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 30 }) }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom(0, -1, 2001, 1.5, 1e308, "100", null, 300000), rawNumber) });
const cluster = fc.constantFrom("default", "nope", "", 1, null);
const isolation = fc.constantFrom("read committed", "repeatable read", "serializable", "snapshot", 1);
const transactionId = fc.oneof({ weight: 6, arbitrary: fc.constant(TX) }, { weight: 1, arbitrary: fc.oneof(fc.uuid(), edgyString, fc.constant("x".repeat(193)), fc.constant(5)) });
const extraMembers = rarely(fc.dictionary(fc.constantFrom("extra", "__proto__", "constructor", "SQL", "sql "), scalar, { minKeys: 1, maxKeys: 2 }), 8);

/** A near-valid member value: right most of the time, else any JSON value. */
function member<T>(right: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 12, arbitrary: right }, { weight: 1, arbitrary: fc.oneof(scalar, fc.jsonValue({ maxDepth: 2 })) });
}

/** No params member for statements without parameters, as a client would send them. */
function withoutNoParams(params: unknown): unknown {
  return Array.isArray(params) && params.length === 0 ? undefined : params;
}

function withExtras(body: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(body, extraMembers).map(([value, extra]) => ({ ...value, ...extra }));
}

function queryBody(engine: Engine): fc.Arbitrary<Record<string, unknown>> {
  return withExtras(
    fc.record({
      statement: statementArbitrary(engine),
      timeoutMs: rarely(timeoutMs),
      bigNumbers: rarely(fc.constantFrom("string", "number", "bogus")),
      rowMode: rarely(fc.constantFrom("object", "array", "table")),
      cluster: rarely(cluster, 8),
      intent: rarely(fc.constantFrom("read", "write", "both"), 6),
      transactionId: rarely(transactionId, 5),
      consistencyToken: rarely(fc.constantFrom("0/0", "0/FFFFFFFF", "0-1-1", "garbage", ""), 10),
      maxStalenessMs: rarely(edgeNumber, 10),
      sqlType: rarely(fc.oneof(scalar, fc.constant([])), 20),
    }).map(({ statement, sqlType, ...options }) => ({ sql: sqlType === undefined ? statement.sql : sqlType, params: withoutNoParams(statement.params), ...options })),
  );
}

function batchBody(engine: Engine): fc.Arbitrary<Record<string, unknown>> {
  const statementMember = statementArbitrary(engine).map((statement) => ({ sql: statement.sql, params: withoutNoParams(statement.params) }));
  return withExtras(
    fc.record({
      statements: member(fc.array(statementMember, { maxLength: 4 })),
      isolation: rarely(isolation),
      readOnly: rarely(member(fc.boolean())),
      timeoutMs: rarely(timeoutMs),
      rowMode: rarely(fc.constantFrom("object", "array")),
      cluster: rarely(cluster, 8),
    }),
  );
}

const beginBody = withExtras(fc.record({ isolation: rarely(isolation), readOnly: rarely(member(fc.boolean())), cluster: rarely(cluster, 6), maxStalenessMs: rarely(edgeNumber, 8) }));
const arn = (right: string) => fc.oneof({ weight: 10, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: fc.constantFrom("", "arn:aws:rds:us-east-1:1:cluster:other", 5, "x".repeat(2049)) });
const target = { resourceArn: arn(RESOURCE_ARN), secretArn: arn(SECRET_ARN), database: rarely(fc.constantFrom("fuzz", "x".repeat(65)), 8), schema: rarely(fc.constant("public"), 20) };

function executeBody(engine: Engine): fc.Arbitrary<Record<string, unknown>> {
  return withExtras(
    fc.record({
      ...target,
      statement: statementArbitrary(engine),
      transactionId: rarely(transactionId, 5),
      includeResultMetadata: rarely(member(fc.boolean())),
      continueAfterTimeout: rarely(fc.boolean(), 8),
      resultSetOptions: rarely(fc.record({ decimalReturnType: rarely(fc.constantFrom("STRING", "DOUBLE_OR_LONG", "x")), longReturnType: rarely(fc.constantFrom("STRING", "LONG", "x")) })),
      formatRecordsAs: rarely(fc.constantFrom("NONE", "JSON", "CSV")),
    }).map(({ statement, ...rest }) => ({ ...rest, sql: statement.dataSql, ...(statement.parameters.length === 0 ? {} : { parameters: statement.parameters }) })),
  );
}

function batchExecuteBody(engine: Engine): fc.Arbitrary<Record<string, unknown>> {
  return withExtras(
    fc.record({ ...target, statement: statementArbitrary(engine), sets: fc.nat({ max: 3 }), transactionId: rarely(transactionId, 4) }).map(({ statement, sets, ...rest }) => ({
      ...rest,
      sql: statement.dataSql,
      parameterSets: Array.from({ length: sets }, () => statement.parameters),
    })),
  );
}

const endBody = withExtras(fc.record({ resourceArn: arn(RESOURCE_ARN), secretArn: arn(SECRET_ARN), transactionId }));
const refreshBody = withExtras(fc.record({ cluster: rarely(cluster) }));

/** JSON text of a near-valid body most of the time; else any JSON, deep nesting, non-JSON, nothing, too much. */
function bodyText(nearValid: fc.Arbitrary<unknown>): fc.Arbitrary<string | Uint8Array | undefined> {
  const json = nearValid.map((value) => JSON.stringify(value));
  return fc.oneof(
    { weight: 24, arbitrary: json },
    { weight: 1, arbitrary: fc.jsonValue({ depthSize: "medium" }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: deepValue.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.tuple(json, fc.nat()).map(([whole, at]) => whole.slice(0, at % whole.length)) },
    { weight: 1, arbitrary: fc.oneof(edgyString, fc.constantFrom("{", "[", "nul", "\ufeff{}", "{'sql': 'select 1'}", "sql=select+1", "{} {}")) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, "") },
    { weight: 1, arbitrary: fc.integer({ min: 65_000, max: 140_000 }).map((length) => JSON.stringify({ sql: "select $1::text as v", params: [huge(length)] })) },
  );
}

// ---------------------------------------------------------------------------------------------------
// Headers

const headerChar = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((code) => String.fromCharCode(code));
const headerText = fc.string({ unit: headerChar, maxLength: 40 });

function credential(tokens: FuzzTokens): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 24, arbitrary: fc.constant(`Bearer ${tokens.writer}`) },
    { weight: 4, arbitrary: fc.constant(`Bearer ${tokens.reader}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${tokens.operator}`) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(..."abcdef0123456789-_~+/="), minLength: 1, maxLength: 60 }).map((token) => `Bearer ${token}`) },
    { weight: 1, arbitrary: fc.constantFrom(`bearer ${tokens.writer}`, `Bearer  ${tokens.writer}`, `Bearer ${tokens.writer}x`, "Bearer", "Basic dXNlcjpwYXNz", " ", "AWS-STS e30=", "AWS-STS ") },
    { weight: 1, arbitrary: base64.map((proof) => `AWS-STS ${proof}`) },
    { weight: 1, arbitrary: headerText },
    { weight: 1, arbitrary: fc.integer({ min: 500, max: 20_000 }).map((length) => `Bearer ${"A".repeat(length)}`) },
  );
}

const contentType = fc.oneof(
  { weight: 20, arbitrary: fc.constant("application/json") },
  { weight: 2, arbitrary: fc.constantFrom("application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON") },
  { weight: 1, arbitrary: fc.constantFrom("application/json; charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/vnd.api+json", "application/x-amz-json-1.1", "", "*/*") },
  { weight: 1, arbitrary: headerText },
);
const requestId = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/), fc.constantFrom("x".repeat(129), "has space", "semi;colon", "ünï", ""));
const extensions = fc.constantFrom("read-replicas", "array-parameters", "large-results", "array-parameters, large-results", "ARRAY-PARAMETERS", "", " , ", "bogus", "read-replicas,bogus");
const sigV4 = fc.constant("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/rds-data/aws4_request, SignedHeaders=host;x-amz-date, Signature=00");

function headersArbitrary(tokens: FuzzTokens): fc.Arbitrary<Record<string, string>> {
  return fc
    .record({
      "content-type": fc.oneof({ weight: 12, arbitrary: contentType }, { weight: 1, arbitrary: fc.constant(undefined) }),
      "x-poolgate-auth": fc.oneof({ weight: 8, arbitrary: credential(tokens) }, { weight: 1, arbitrary: fc.constant(undefined) }),
      authorization: rarely(fc.oneof(credential(tokens), sigV4)),
      "x-request-id": rarely(requestId),
      "x-poolgate-extensions": rarely(extensions, 6),
    })
    .map((headers) => Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)));
}

// ---------------------------------------------------------------------------------------------------
// Requests

const transactionPath = fc
  .tuple(
    fc.oneof({ weight: 6, arbitrary: fc.constant(TX) }, { weight: 1, arbitrary: fc.oneof(fc.uuid(), fc.constantFrom("", "%00", "%2e%2e", "a%2Fb", "x".repeat(300))) }),
    fc.constantFrom("commit", "rollback"),
    fc.constantFrom("", "", "", "?cluster=default", "?cluster=nope", "?cluster=", "?foo=1", "?cluster=a&cluster=b"),
  )
  .map(([id, action, query]) => `/v1/transactions/${id}/${action}${query}`);
const pathChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%?=&:;@!$'()*+,");
const garbagePath = fc.oneof(
  fc.constantFrom("/", "/v1", "/v1/", "/v1/query/", "/V1/QUERY", "/execute", "/Execute/", "//v1/query", "/v1/query?x=1", "/v1/%", "/v1/query%00", "/v1/transactions//commit", "/.env", "/v1/admin", "/Execute?x=%zz", "/v1/%E0%A4%A"),
  fc.string({ unit: pathChar, maxLength: 60 }).map((path) => `/${path}`),
  fc.integer({ min: 1000, max: 6000 }).map((length) => `/${"a".repeat(length)}`),
);
const method = fc.constantFrom<Method>("GET", "POST", "PUT", "DELETE");

function post(path: fc.Arbitrary<string>, headers: fc.Arbitrary<Record<string, string>>, body: fc.Arbitrary<string | Uint8Array | undefined>): fc.Arbitrary<FuzzRequest> {
  return fc.record({ method: fc.constant<Method>("POST"), path, headers, body });
}

/** One request to either surface; `engine` picks the SQL dialect. */
export function fuzzRequestArbitrary(engine: Engine, tokens: FuzzTokens): fc.Arbitrary<FuzzRequest> {
  const headers = headersArbitrary(tokens);
  const noBody = fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: bodyText(refreshBody) });
  return fc.oneof(
    { weight: 24, arbitrary: post(fc.constant("/v1/query"), headers, bodyText(queryBody(engine))) },
    { weight: 7, arbitrary: post(fc.constant("/v1/batch"), headers, bodyText(batchBody(engine))) },
    // BEGINs are rare: each pins one of the pool's connections until it idles out.
    { weight: 1, arbitrary: post(fc.constant("/v1/transactions"), headers, fc.oneof(fc.constant(undefined), bodyText(beginBody))) },
    { weight: 5, arbitrary: post(transactionPath, headers, noBody) },
    { weight: 18, arbitrary: post(fc.constant("/Execute"), headers, bodyText(executeBody(engine))) },
    { weight: 5, arbitrary: post(fc.constant("/BatchExecute"), headers, bodyText(batchExecuteBody(engine))) },
    { weight: 1, arbitrary: post(fc.constant("/BeginTransaction"), headers, bodyText(withExtras(fc.record(target)))) },
    { weight: 5, arbitrary: post(fc.constantFrom("/CommitTransaction", "/RollbackTransaction"), headers, bodyText(endBody)) },
    { weight: 1, arbitrary: post(fc.constant("/ExecuteSql"), headers, bodyText(executeBody(engine))) },
    { weight: 3, arbitrary: fc.record({ method: fc.constant<Method>("GET"), path: fc.constantFrom(...OPERATOR_PATHS), headers, body: fc.constant(undefined) }) },
    { weight: 1, arbitrary: post(fc.constant("/v1/admin/topology/refresh"), headers, noBody) },
    { weight: 3, arbitrary: fc.record({ method, path: fc.constantFrom(...NATIVE_PATHS, ...DATA_API_PATHS, ...OPERATOR_PATHS), headers, body: noBody }) },
    { weight: 3, arbitrary: fc.record({ method, path: garbagePath, headers, body: noBody }) },
  );
}
