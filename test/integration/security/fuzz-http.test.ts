/**
 * Fuzzes both HTTP surfaces with fast-check against a real in-process gateway: 10,000 requests on the
 * local PostgreSQL, then a smaller run on the local MariaDB. Requests (test/support/http-fuzz-arbitraries.ts)
 * are random paths and methods, credential/content-type/request-id/extension headers valid and not, and
 * bodies near each schema (wrong types, extra keys, edge numbers, odd unicode, every parameter and Field
 * variant, valid, mutated and garbage SQL), any JSON, deep nesting, non-JSON, nothing, too much. Small
 * limits make the limit paths run; bearer auth with a read-write, a read-only and an operator principal.
 *
 * Asserted for every answer: it comes (a per-request timeout: a hang fails), never 500, only statuses that
 * random input may legitimately get; errors in the surface's format (native: errorBodySchema with the
 * registry's status and retryable; Data API: {message, code} with x-amzn-ErrorType, never
 * InternalServerErrorException); x-request-id (native, echoed when well-formed) or x-amzn-RequestId; 2xx
 * bodies match their route's response schema. Afterwards: every pool idle with no open transaction, no
 * non-idle gateway session in the database, no more sessions than the pool may hold, nothing logged as
 * an unhandled error, and a valid request still answered on both surfaces.
 */
import fc from "fast-check";
import { Agent, request as undiciRequest } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { DATA_API_EXCEPTIONS } from "../../../schemas/data-api.js";
import { ERROR_CODES, errorBodySchema } from "../../../schemas/errors.js";
import { healthResponseSchema, readyResponseSchema, topologyResponseSchema } from "../../../schemas/health.js";
import { statusResponseSchema } from "../../../schemas/status.js";
import { batchResponseSchema, beginResponseSchema, endTransactionResponseSchema, queryResponseSchema } from "../../../schemas/query.js";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { captureLogs } from "../../support/log-capture.js";
import { type Engine, type FuzzRequest, fuzzRequestArbitrary, materialize, RESOURCE_ARN, SECRET_ARN, surfaceOf } from "../../support/http-fuzz-arbitraries.js";
import { createTestMysqlDatabase, mysqlGatewaySessions } from "../../support/mysql.js";
import { createTestDatabase, gatewaySessions } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

const SEED = 20_240_611;
const TOKENS = {
  writer: "fuzz-writer-token-0123456789abcdef",
  reader: "fuzz-reader-token-0123456789abcdef",
  operator: "fuzz-operator-token-0123456789abcd",
};
const POOL_MAX = 4;
/** Longest legitimate answer: pool wait (2 s) + statement (2 s) + cancel grace (2 s) + retries (1 s). */
const REQUEST_TIMEOUT_MS = 10_000;
/** After the last answer: an idle transaction expires (200 ms), a session reset is bounded (2 s). */
const SETTLE_MS = 3_000;
/** One keep-alive client for every request of the file. */
const agent = new Agent({ keepAliveTimeout: 30_000 });
afterAll(() => agent.close());

/** What the fixture needs from one engine. */
interface FuzzTarget {
  engine: Engine;
  requests: number;
  /** Creates the database and the fixture tables. */
  setup(): Promise<{ url: string; sessions(): Promise<{ total: number; busy: unknown[] }>; drop(): Promise<void> }>;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

// ---------------------------------------------------------------------------------------------------
// The contract every answer must keep

/**
 * Statuses random input may get on the native API from a healthy database: no 500; no 429, as one request
 * is in flight at a time; 503 (CONNECTION_LOST) only for SQL that ends its own session, and 502
 * (OUTCOME_UNKNOWN) for SQL that may commit part of itself (its own COMMIT, several statements,
 * MySQL's implicit commits) before a timeout, for any statement cut after its cancel did not stop it
 * (CUT_AFTER_CANCEL), or one that may write answered as its cancel went out (ANSWERED_AS_CANCELLED).
 */
const NATIVE_STATUSES = new Set([200, 201, 400, 401, 403, 404, 409, 413, 415, 431, 504]);
const ENDS_ITS_SESSION = /pg_terminate_backend/i;
const MAY_COMMIT_IN_PARTS = /pg_terminate_backend|;|\b(begin|start|commit|end|rollback|abort|truncate|analyze|lock|unlock|create|load|set|prepare)\b/i;
const DATA_API_STATUSES = new Set([200, 400, 403, 404]);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const NATIVE_RESPONSE_SCHEMAS: Record<string, z.ZodType> = {
  "POST /v1/query": queryResponseSchema,
  "POST /v1/batch": batchResponseSchema,
  "POST /v1/transactions": beginResponseSchema,
  "POST /v1/transactions/:id/commit": endTransactionResponseSchema,
  "POST /v1/transactions/:id/rollback": endTransactionResponseSchema,
  "GET /healthz": healthResponseSchema,
  "GET /readyz": readyResponseSchema,
  "GET /v1/admin/topology": topologyResponseSchema,
  "POST /v1/admin/topology/refresh": topologyResponseSchema,
  "GET /v1/admin/status": statusResponseSchema,
};

function header(answer: Answer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The error code of a failure in either format, for the distribution printed after the run. */
function codeOf(answer: Answer): string {
  if (answer.status < 300) return "";
  const json = parseJson(answer.text);
  const body = (json.ok ? json.value : undefined) as { error?: { code?: unknown }; code?: unknown } | undefined;
  const code = body?.error?.code ?? body?.code;
  return typeof code === "string" ? code : "(not the gateway's format)";
}

/** The id a successful BEGIN (native or Data API) answered with. */
function transactionIdIn(request: FuzzRequest, answer: Answer): string | undefined {
  if (answer.status >= 300 || !["/v1/transactions", "/BeginTransaction"].includes(request.path)) return undefined;
  const json = parseJson(answer.text);
  const id = json.ok ? (json.value as { transactionId?: unknown } | null)?.transactionId : undefined;
  return typeof id === "string" ? id : undefined;
}

function routeOf(request: FuzzRequest): string {
  const path = (request.path.split("?")[0] ?? "").replace(/^\/v1\/transactions\/[^/]+\/(commit|rollback)$/, "/v1/transactions/:id/$1");
  return `${request.method} ${path}`;
}

/** The SQL a native request carries (its `sql`, its batch statements'), for the 502/503 allowances. */
function sqlOf(request: FuzzRequest): string {
  const json = typeof request.body === "string" ? parseJson(request.body) : { ok: false as const };
  if (!json.ok || typeof json.value !== "object" || json.value === null) return "";
  const { sql, statements } = json.value as { sql?: unknown; statements?: unknown };
  const texts = [sql, ...(Array.isArray(statements) ? statements.map((statement) => (statement as { sql?: unknown } | null)?.sql) : [])];
  return texts.filter((text): text is string => typeof text === "string").join("\n");
}

/** A principal's open transactions may pin only its share of the pool: more BEGINs get TOO_MANY_TRANSACTIONS. */
const BEGINS = new Set(["POST /v1/transactions", "POST /BeginTransaction"]);

/**
 * The session lifecycle's honest answer for a statement that outlived its deadline and was still running
 * when the grace after its cancel ran out (KILL QUERY waits for a side session to log in, which takes
 * longer than the grace on a loaded machine): the socket is cut, so whatever was sent may have been applied.
 */
const CUT_AFTER_CANCEL = /did not stop after its cancel/;
/**
 * The other honest OUTCOME_UNKNOWN at a deadline: a statement the gateway cannot prove only reads answered
 * just as its cancel went out (a 1 ms timeout makes that common), so it may have been applied.
 */
const ANSWERED_AS_CANCELLED = /answered just as its cancel \([^)]+\) went out: it may have been applied/;

function statusAllowed(request: FuzzRequest, answer: Answer): boolean {
  const { status } = answer;
  if (status === 503) return ENDS_ITS_SESSION.test(sqlOf(request)) || BEGINS.has(routeOf(request));
  if (status === 502) return MAY_COMMIT_IN_PARTS.test(sqlOf(request)) || (codeOf(answer) === "OUTCOME_UNKNOWN" && (CUT_AFTER_CANCEL.test(answer.text) || ANSWERED_AS_CANCELLED.test(answer.text)));
  return NATIVE_STATUSES.has(status);
}

function nativeViolations(request: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = [];
  const requestId = header(answer, "x-request-id");
  if (!requestId) problems.push("no x-request-id header");
  const sent = request.headers["x-request-id"]?.trim();
  // A 431 comes from a request whose headers were never read: there is nothing to echo.
  if (requestId && sent !== undefined && REQUEST_ID.test(sent) && requestId !== sent && answer.status !== 431) problems.push(`x-request-id ${requestId} is not the well-formed one sent (${sent})`);
  const json = parseJson(answer.text);
  if (answer.status < 300) {
    const route = routeOf(request);
    if ((answer.status === 201) !== (route === "POST /v1/transactions")) problems.push(`status ${answer.status} for ${route}`);
    // The status page and the Prometheus exposition are the two answers that are not JSON.
    if (route === "GET /" || route === "GET /metrics") {
      const type = header(answer, "content-type") ?? "";
      if (!type.startsWith(route === "GET /" ? "text/html" : "text/plain")) problems.push(`${route} answered ${type}`);
      return problems;
    }
    if (!json.ok) return [...problems, "2xx body is not JSON"];
    const schema = NATIVE_RESPONSE_SCHEMAS[route];
    const parsed = schema?.safeParse(json.value);
    if (parsed && !parsed.success) problems.push(`2xx body does not match the response schema of ${route}: ${parsed.error.message}`);
    if (route === "POST /v1/query" && parsed?.success && (json.value as { rows: unknown[] }).rows.length > 1000) problems.push("more rows than limits.maxResultRows");
    return problems;
  }
  if (!statusAllowed(request, answer)) problems.push(`status ${answer.status} is not one random input may get`);
  const body = json.ok ? errorBodySchema.safeParse(json.value) : undefined;
  if (!body?.success) return [...problems, `error body is not the native error format: ${body?.error.message ?? "not JSON"}`];
  const { code, retryable, requestId: bodyRequestId } = body.data.error;
  if (ERROR_CODES[code].status !== answer.status) problems.push(`${code} sent with status ${answer.status}, registry says ${ERROR_CODES[code].status}`);
  if (ERROR_CODES[code].retryable !== retryable) problems.push(`${code} sent with retryable ${retryable}`);
  if (bodyRequestId !== requestId) problems.push(`error.requestId ${bodyRequestId} is not the x-request-id header ${requestId}`);
  if ((answer.status === 503 || answer.status === 429) && !header(answer, "retry-after")) problems.push("503/429 without retry-after");
  if (answer.status === 503 && code !== "CONNECTION_LOST" && !(code === "TOO_MANY_TRANSACTIONS" && BEGINS.has(routeOf(request)))) {
    problems.push(`${code}: nothing in a healthy database should answer it`);
  }
  return problems;
}

function dataApiViolations(request: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = [];
  if (!header(answer, "x-amzn-requestid")) problems.push("no x-amzn-RequestId header");
  const tooManyTransactions = answer.status === 503 && BEGINS.has(routeOf(request)) && answer.text.includes("maxTransactionShare");
  if (!DATA_API_STATUSES.has(answer.status) && !tooManyTransactions) problems.push(`status ${answer.status} is not one random input may get`);
  const json = parseJson(answer.text);
  if (!json.ok || typeof json.value !== "object" || json.value === null) return [...problems, "body is not a JSON object"];
  if (answer.status < 300) return problems;
  const { message, code } = json.value as { message?: unknown; code?: unknown };
  if (typeof message !== "string" || typeof code !== "string" || !(code in DATA_API_EXCEPTIONS)) return [...problems, "error body is not {message, code} with a known exception"];
  if (header(answer, "x-amzn-errortype") !== code) problems.push(`x-amzn-ErrorType ${header(answer, "x-amzn-errortype")} is not ${code}`);
  if (DATA_API_EXCEPTIONS[code as keyof typeof DATA_API_EXCEPTIONS] !== answer.status) problems.push(`${code} sent with status ${answer.status}`);
  if (code === "InternalServerErrorException") problems.push("InternalServerErrorException: a gateway bug");
  return problems;
}

// ---------------------------------------------------------------------------------------------------
// The run

function fuzzSuite(target: FuzzTarget): void {
  describe(`fuzzing both HTTP surfaces on ${target.engine}`, () => {
    let gateway: TestGateway;
    let database: Awaited<ReturnType<FuzzTarget["setup"]>>;
    let tokens: TokensFile | undefined;
    const { logger, lines: errorLines } = captureLogs("error");

    beforeAll(async () => {
      database = await target.setup();
      tokens = writeTokensFile(TOKENS);
      gateway = await startTestGateway(
        {
          clusters: { default: { writerUrl: database.url } },
          server: { maxRequestBytes: 65_536 },
          // Data API transactions idle out as fast as native ones, and its statements time out as soon.
          dataApi: { maxRequestBytes: 65_536, statementTimeoutMs: 1_000, transactionIdleTimeoutMs: 200 },
          limits: { maxParams: 50, maxResultRows: 1_000, maxResultBytes: 1_048_576 },
          statements: { maxTimeoutMs: 2_000, defaultTimeoutMs: 1_000 },
          transactions: { idleTimeoutMs: 200 },
          pool: { maxSize: POOL_MAX, acquireTimeoutMs: 2_000 },
          // Conflicts and lost sessions are retried for at most 1 s: part of REQUEST_TIMEOUT_MS's budget.
          retry: { maxTotalMs: 1_000 },
          auth: {
            bearer: { tokensFile: tokens.path },
            principals: { writer: { clusters: { default: "read-write" } }, reader: { clusters: { default: "read-only" } }, operator: { admin: true } },
          },
        },
        { logger },
      );
    });

    afterAll(async () => {
      await gateway?.stop();
      await database?.drop();
      tokens?.remove();
    });

    /** Sends one request; no answer within REQUEST_TIMEOUT_MS (a hang) or no HTTP answer at all fails. */
    async function send(request: FuzzRequest): Promise<Answer> {
      try {
        const response = await undiciRequest(gateway.baseUrl + request.path, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          dispatcher: agent,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
      } catch (err) {
        const hung = err instanceof Error && err.name === "TimeoutError";
        throw new Error(hung ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : `no HTTP answer: ${String(err)}`, { cause: err });
      }
    }

    it(`keeps the contract over ${target.requests.toLocaleString("en")} random requests`, async () => {
      const statuses = new Map<string, number>();
      const transactionIds: string[] = [];
      let sent = 0;
      const started = Date.now();
      const property = fc.asyncProperty(fuzzRequestArbitrary(target.engine, TOKENS), fc.nat(), async (generated, pick) => {
        const request = materialize(generated, transactionIds, pick);
        const surface = surfaceOf(request);
        sent++;
        const answer = await send(request);
        const label = `${surface} ${answer.status} ${codeOf(answer)}`.trimEnd();
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
        // Later requests' @@tx@@ names one of the three transactions begun last.
        const begun = transactionIdIn(request, answer);
        if (begun !== undefined && transactionIds.push(begun) > 3) transactionIds.shift();
        // Headers over Node's limit are refused before any route is known: in the native format on both surfaces.
        const problems = surface === "native" || answer.status === 431 ? nativeViolations(request, answer) : dataApiViolations(request, answer);
        if (problems.length > 0) {
          const id = header(answer, "x-request-id") ?? header(answer, "x-amzn-requestid") ?? "(none)";
          const logged = errorLines.filter((line) => line.includes(id)).join("\n") || "(nothing)";
          throw new Error(`${problems.join("; ")}\nanswer ${answer.status}: ${answer.text.slice(0, 600)}\ngateway log for ${id}:\n${logged}`);
        }
      });
      try {
        await fc.assert(property, { seed: SEED, numRuns: target.requests });
      } finally {
        const distribution = [...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`);
        console.log(`${target.engine}: ${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s\n  ${distribution.join("\n  ")}`);
      }
      expect(sent).toBe(target.requests);
    }, 120_000);

    it("is left with idle pools, idle database sessions and a gateway that still answers", async () => {
      await settle(async () => {
        const busy: string[] = [];
        for (const cluster of gateway.gateway.clusters.values()) {
          const health = cluster.health();
          if (health.openTransactions > 0) busy.push(`${cluster.name}: ${health.openTransactions} open transactions`);
          for (const endpoint of health.endpoints) {
            if (endpoint.pool.active > 0 || endpoint.pool.waiting > 0) busy.push(`${endpoint.name}: active ${endpoint.pool.active}, waiting ${endpoint.pool.waiting}`);
          }
        }
        const sessions = await database.sessions();
        if (sessions.busy.length > 0) busy.push(`busy database sessions: ${JSON.stringify(sessions.busy)}`);
        if (sessions.total > POOL_MAX) busy.push(`${sessions.total} gateway sessions for a pool of ${POOL_MAX}`);
        return busy;
      });
      expect(errorLines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      const auth = { "x-poolgate-auth": `Bearer ${TOKENS.writer}`, "content-type": "application/json" };
      const native = await send({ method: "POST", path: "/v1/query", headers: auth, body: JSON.stringify({ sql: "select 1 as one" }) });
      expect(native.status).toBe(200);
      expect(JSON.parse(native.text).rows).toEqual([{ one: 1 }]);
      const dataApi = await send({ method: "POST", path: "/Execute", headers: auth, body: JSON.stringify({ resourceArn: RESOURCE_ARN, secretArn: SECRET_ARN, sql: "select 1 as one" }) });
      expect(dataApi.status).toBe(200);
      expect(JSON.parse(dataApi.text).records).toEqual([[{ longValue: 1 }]]);
    });
  });
}

/** Polls until `problems()` finds none, or fails with the last ones found once SETTLE_MS has passed. */
async function settle(problems: () => Promise<string[]>): Promise<void> {
  let found: string[] = [];
  await waitFor(async () => (found = await problems()).length === 0, SETTLE_MS, "the gateway and the database to settle").catch(() => undefined);
  expect(found).toEqual([]);
}

const FIXTURE = {
  postgres: [
    "create table fuzz_items (id serial primary key, name text unique, qty int not null default 0)",
    "insert into fuzz_items (name, qty) select 'item' || i, i from generate_series(1, 20) as i",
    "create table fuzz_log (id bigserial primary key, note text, data jsonb, payload bytea)",
  ],
  mysql: [
    "create table fuzz_items (id int auto_increment primary key, name varchar(200) unique, qty int not null default 0)",
    "insert into fuzz_items (name, qty) select concat('item', seq), seq from seq_1_to_20",
    "create table fuzz_log (id bigint auto_increment primary key, note text, data json, payload blob)",
  ],
};

fuzzSuite({
  engine: "postgres",
  requests: 10_000,
  async setup() {
    const db = await createTestDatabase();
    for (const sql of FIXTURE.postgres) await db.admin.query(sql);
    return {
      url: db.url,
      sessions: async () => {
        const sessions = await gatewaySessions(db);
        return { total: sessions.length, busy: sessions.filter((session) => session.state !== "idle") };
      },
      drop: () => db.drop(),
    };
  },
});

fuzzSuite({
  engine: "mysql",
  requests: 3_000,
  async setup() {
    const db = await createTestMysqlDatabase();
    for (const sql of FIXTURE.mysql) await db.query(sql);
    return {
      url: db.url,
      sessions: async () => {
        const sessions = await mysqlGatewaySessions(db);
        return { total: sessions.length, busy: sessions.filter((session) => session.command !== "Sleep") };
      },
      drop: () => db.drop(),
    };
  },
});
