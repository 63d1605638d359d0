/**
 * One trace from a caller to the database (issue 39): a client call made under a parent span reaches
 * the gateway with its traceparent, and the gateway's spans (the request, authentication, the routing
 * decision, the session's acquire, each database round trip, the serialisation) hang under it with
 * OpenTelemetry's database attributes; the serialisation span on every surface (native, RDS Data API,
 * Neon, PlanetScale). Spans are read with an in-memory exporter, and once more as a
 * collector receives them over OTLP/HTTP (test/support/otlp-receiver.ts). X-Ray's header is accepted
 * too. `tracing.sqlComments` is read back from the server's own view of the running statement
 * (pg_stat_activity, MariaDB's processlist) on both engines.
 */
import { context, SpanKind, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../../client/index.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../support/otlp-receiver.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

const TOKENS = { alice: "tracing-alice-0123456789abcdef0123" };
const DATA_API_TARGET = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:pg", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:pg-AbCdEf" };

let pgDb: TestDatabase;
let myDb: TestMysqlDatabase;
let tokens: TokensFile;
let gw: TestGateway;
const gatewaySpans = new InMemorySpanExporter();
/** The caller's own tracer (a Lambda's), exporting to memory. */
const callerSpans = new InMemorySpanExporter();
const callerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(callerSpans)] });

function spansOfTrace(traceId: string): ReadableSpan[] {
  return gatewaySpans.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span ${name}, got ${found.length} among ${spans.map((span) => span.name).join(", ")}`);
  return found[0] as ReadableSpan;
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe("one trace from the caller to the database", () => {
  beforeAll(async () => {
    pgDb = await createTestDatabase();
    myDb = await createTestMysqlDatabase();
    await pgDb.admin.query("create table items (id int primary key, note text)");
    await pgDb.admin.query("insert into items values (1, 'one'), (2, 'two')");
    await myDb.query("create table items (id int primary key, note text)");
    await myDb.query("insert into items values (1, 'one')");
    tokens = writeTokensFile(TOKENS);
    gw = await startTestGateway(
      {
        clusters: { pg: { writerUrl: pgDb.url }, my: { writerUrl: myDb.url } },
        defaultCluster: "pg",
        pool: { maxSize: 2, minIdle: 0 },
        auth: { bearer: { tokensFile: tokens.path }, principals: { alice: { clusters: { pg: "read-write", my: "read-write" } } } },
        tracing: { enabled: true, statementText: true, sqlComments: true },
        dataApi: { resources: { [DATA_API_TARGET.resourceArn]: { cluster: "pg" } } },
      },
      { spanExporter: gatewaySpans },
    );
  });

  afterAll(async () => {
    await gw?.stop();
    await callerProvider.shutdown();
    tokens?.remove();
    await pgDb?.drop();
    await myDb?.drop();
  });

  it("hangs the gateway's spans under the client's span, down to the database round trip", async () => {
    const client = createClient({ url: gw.baseUrl, headers: bearer(TOKENS.alice), cluster: "pg" });
    const tracer = callerProvider.getTracer("a-lambda");
    const parent = tracer.startSpan("handler", { kind: SpanKind.SERVER });
    const rows = await context.with(trace.setSpan(context.active(), parent), () => client.query<{ note: string }>("select note from items where id = $1", [2]));
    parent.end();
    expect(rows.rows).toEqual([{ note: "two" }]);
    const { traceId, spanId: parentId } = parent.spanContext();

    await waitFor(() => spansOfTrace(traceId).some((span) => span.kind === SpanKind.SERVER), 10000, "the server span");
    const spans = spansOfTrace(traceId);
    const server = only(spans, "POST /v1/query");
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe(parentId);
    expect(server.attributes["http.response.status_code"]).toBe(200);
    expect(server.attributes["http.route"]).toBe("/v1/query");
    expect(server.attributes["enduser.id"]).toBe("alice");
    const serverId = server.spanContext().spanId;

    const auth = only(spans, "poolgate.authenticate");
    expect(parentOf(auth)).toBe(serverId);
    const route = only(spans, "poolgate.route");
    expect(parentOf(route)).toBe(serverId);
    expect(route.attributes["poolgate.route.endpoint"]).toEqual(expect.any(String));
    expect(route.attributes["poolgate.route.reason"]).toEqual(expect.any(String));
    const acquire = only(spans, "poolgate.pool.acquire");
    expect(parentOf(acquire)).toBe(serverId);

    const roundTrips = spans.filter((span) => span.kind === SpanKind.CLIENT);
    const select = roundTrips.find((span) => span.attributes["db.operation.name"] === "SELECT" && String(span.attributes["db.query.text"]).startsWith("select note from items"));
    if (select === undefined) throw new Error(`no SELECT round trip among ${roundTrips.map((span) => span.name).join(", ")}`);
    expect(parentOf(select)).toBe(serverId);
    expect(select.name).toBe(`SELECT ${pgDb.name}`);
    expect(select.attributes).toMatchObject({
      "db.system.name": "postgresql",
      "db.namespace": pgDb.name,
      "db.operation.name": "SELECT",
      "server.address": "127.0.0.1",
      "server.port": 5432,
      "db.response.returned_rows": 1,
    });
    // Never a parameter: the text only, and the value 2 nowhere in the attributes.
    expect(Object.values(select.attributes).map(String)).not.toContain("2");
    expect(parentOf(only(spans, "poolgate.serialize"))).toBe(serverId);
    // The caller's own span is the client's parent and nothing of the gateway's.
    expect(callerSpans.getFinishedSpans().map((span) => span.name)).toEqual(["handler"]);
  });

  it("writes every surface's answer under a poolgate.serialize span of the request's, with its length", async () => {
    /** Posts `body` under a trace of its own; answers the body's text and the trace's serialise span, checked to hang under the server span. */
    const traced = async (traceId: string, route: string, path: string, body: unknown, headers: Record<string, string>) => {
      const answer = await fetch(`${gw.baseUrl}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01`, ...headers },
      });
      const text = await answer.text();
      expect(answer.status, text).toBe(200);
      await waitFor(() => spansOfTrace(traceId).some((span) => span.kind === SpanKind.SERVER), 10000, `the server span of ${route}`);
      const spans = spansOfTrace(traceId);
      const server = only(spans, `POST ${route}`);
      const serialize = only(spans, "poolgate.serialize");
      expect(parentOf(serialize)).toBe(server.spanContext().spanId);
      return { text, chars: serialize.attributes["poolgate.response.chars"] };
    };

    const dataApi = await traced("33333333333333333333333333333333", "/Execute", "/Execute", { ...DATA_API_TARGET, sql: "select note from items where id = 1" }, bearer(TOKENS.alice));
    expect(JSON.parse(dataApi.text)).toMatchObject({ records: [[{ stringValue: "one" }]] });
    expect(dataApi.chars).toBe(dataApi.text.length);

    const neon = await traced("44444444444444444444444444444444", "/sql", "/sql", { query: "select note from items where id = $1", params: ["2"] }, {
      "neon-connection-string": `postgresql://alice:${TOKENS.alice}@gateway.example/pg`,
      "neon-raw-text-output": "true",
      "neon-array-mode": "true",
    });
    expect(JSON.parse(neon.text)).toMatchObject({ command: "SELECT", rows: [["two"]] });
    expect(neon.chars).toBe(neon.text.length);

    const planetscale = await traced("55555555555555555555555555555555", "/psdb.v1alpha1.Database/Execute", "/psdb.v1alpha1.Database/Execute", { query: "select note from items where id = 1" }, {
      authorization: `Basic ${Buffer.from(`alice@my:${TOKENS.alice}`).toString("base64")}`,
    });
    // The serialised part is the result; the session and timing around it are the envelope's.
    const result = /"result":(.*),"timing":/.exec(planetscale.text)?.[1] ?? "";
    expect(JSON.parse(result)).toMatchObject({ rows: [{ lengths: ["3"], values: Buffer.from("one").toString("base64") }] });
    expect(planetscale.chars).toBe(result.length);
  });

  it("continues an X-Ray trace from X-Amzn-Trace-Id", async () => {
    const answer = await gw.post("/v1/query", { sql: "select 1 as one" }, { ...bearer(TOKENS.alice), "x-amzn-trace-id": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1" });
    expect(answer.status).toBe(200);
    await waitFor(() => spansOfTrace("5759e988bd862e3fe1be46a994272793").some((span) => span.kind === SpanKind.SERVER), 10000, "the X-Ray trace's server span");
    const server = only(spansOfTrace("5759e988bd862e3fe1be46a994272793"), "POST /v1/query");
    expect(parentOf(server)).toBe("53995c3f42cd8ad8");
  });

  it("records a failed round trip with its SQLSTATE", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const answer = await gw.post("/v1/query", { sql: "select * from no_such_table" }, { ...bearer(TOKENS.alice), traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    expect(answer.status).toBe(400);
    await waitFor(() => spansOfTrace(traceId).some((span) => span.kind === SpanKind.SERVER), 10000, "the failed request's server span");
    const failed = spansOfTrace(traceId).find((span) => span.kind === SpanKind.CLIENT && span.attributes["db.response.status_code"] === "42P01");
    expect(failed?.attributes["error.type"]).toBe("DATABASE_ERROR");
  });

  it("appends a sqlcommenter comment the PostgreSQL server sees, and answers the caller's statement", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const answer = await gw.post(
      "/v1/query",
      { sql: "select query from pg_stat_activity where pid = pg_backend_pid() and $1::int = 1", params: [1] },
      { ...bearer(TOKENS.alice), traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(answer.status).toBe(200);
    const seen = String(answer.body.rows[0].query);
    await waitFor(() => spansOfTrace(traceId).some((span) => span.kind === SpanKind.SERVER), 10000, "the server span");
    const serverId = only(spansOfTrace(traceId), "POST /v1/query").spanContext().spanId;
    expect(seen).toBe(
      `select query from pg_stat_activity where pid = pg_backend_pid() and $1::int = 1\n/*principal='alice',route='POST%20%2Fv1%2Fquery',traceparent='00-${traceId}-${serverId}-01'*/`,
    );
  });

  it("appends the comment on MariaDB too, prepared or not", async () => {
    for (const params of [[], [1]]) {
      const traceId = params.length === 0 ? "11111111111111111111111111111111" : "22222222222222222222222222222222";
      const sql = params.length === 0 ? "select info from information_schema.processlist where id = connection_id()" : "select info from information_schema.processlist where id = connection_id() and ? = 1";
      const answer = await gw.post("/v1/query", { cluster: "my", sql, params }, { ...bearer(TOKENS.alice), traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
      expect(answer.status).toBe(200);
      const seen = String(answer.body.rows[0].info);
      expect(seen.startsWith(`${sql}\n/*principal='alice',route='POST%20%2Fv1%2Fquery',traceparent='00-${traceId}-`)).toBe(true);
    }
  });
});

describe("spans over OTLP/HTTP", () => {
  let receiver: OtlpReceiver;
  let db: TestDatabase;
  let exporting: TestGateway;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    db = await createTestDatabase();
    exporting = await startTestGateway({
      clusters: { pg: { writerUrl: db.url } },
      defaultCluster: "pg",
      pool: { maxSize: 1, minIdle: 0 },
      tracing: { enabled: true, endpoint: receiver.url, scheduledDelayMs: 50, serviceName: "poolgate-under-test" },
    });
  });

  afterAll(async () => {
    await exporting?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it("exports the request's spans to a collector, which decodes them with their parents", async () => {
    const traceId = "5b8efff798038103d269b633813fc60c";
    const answer = await exporting.post("/v1/query", { sql: "select 41 + 1 as answer" }, { traceparent: `00-${traceId}-eee19b7ec3c1b174-01` });
    expect(answer.status).toBe(200);
    await waitFor(() => receiver.spans.some((span) => span.traceId === traceId && span.name === "POST /v1/query"), 15000, "the server span at the receiver");
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    const server = spans.find((span) => span.name === "POST /v1/query");
    expect(server?.parentSpanId).toBe("eee19b7ec3c1b174");
    expect(server?.serviceName).toBe("poolgate-under-test");
    // The statement's round trip hangs under the server span (a new session's own round trips under the pool's acquire).
    const underServer = (span: ReceivedSpan) => span.traceId === traceId && span.attributes["db.system.name"] === "postgresql" && span.parentSpanId === server?.spanId;
    await waitFor(() => receiver.spans.some(underServer), 15000, "the round trip at the receiver");
    const roundTrips = receiver.spans.filter((span) => span.traceId === traceId && span.attributes["db.system.name"] === "postgresql");
    const ids = new Set(receiver.spans.filter((span) => span.traceId === traceId).map((span) => span.spanId));
    for (const roundTrip of roundTrips) {
      expect(ids.has(roundTrip.parentSpanId)).toBe(true);
      expect(roundTrip.attributes["db.namespace"]).toBe(db.name);
      // statementText is off: no SQL in the spans.
      expect(roundTrip.attributes["db.query.text"]).toBeUndefined();
    }
    expect(roundTrips.filter(underServer).map((span) => span.attributes["db.operation.name"])).toContain("SELECT");
  });
});
