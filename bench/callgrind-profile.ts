/**
 * Reads a callgrind output file (`--dump-instr=no`; Ir first of its events, and with `--cache-sim=yes
 * --branch-sim=yes` the simulated cache misses and branch mispredictions after it) into each function's
 * own instruction count (self cost: what ran in the function, not in what it called), and the dump's
 * totals of every event. V8's generated code
 * has no symbols, so callgrind names it by address; a perf map (`node --perf-basic-prof` writes
 * /tmp/perf-<pid>.map) names those addresses after the JavaScript functions compiled there.
 */
import { readFileSync } from "node:fs";

interface MapEntry {
  start: number;
  end: number;
  name: string;
}

/** The perf map's code ranges, sorted by start; where V8 reused an address, the later entry wins. */
function readPerfMap(path: string): MapEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const entries: MapEntry[] = [];
  for (const line of text.split("\n")) {
    const first = line.indexOf(" ");
    const second = line.indexOf(" ", first + 1);
    if (first < 0 || second < 0) continue;
    const start = Number.parseInt(line.slice(0, first), 16);
    const size = Number.parseInt(line.slice(first + 1, second), 16);
    if (Number.isFinite(start) && Number.isFinite(size)) entries.push({ start, end: start + size, name: line.slice(second + 1) });
  }
  // A stable sort: of two entries at one address the later stays later, and the search below finds it first.
  return entries.sort((a, b) => a.start - b.start);
}

function jitName(entries: readonly MapEntry[], address: number): string {
  let low = 0;
  let high = entries.length - 1;
  let at = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if ((entries[mid] as MapEntry).start <= address) {
      at = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  // Code objects do not overlap, but a freed one's range may still be listed: look a few back.
  for (let i = at; i >= 0 && i > at - 50; i--) {
    const entry = entries[i] as MapEntry;
    if (entry.start <= address && address < entry.end) return `JS ${shortPath(entry.name.replace(/^JS:/, ""))}`;
  }
  return "JS (code not in the perf map)";
}

/** A C++ name without its parameter list (V8's "(anonymous namespace)" is part of the name). */
function withoutParameters(name: string): string {
  const open = name.search(/\((?!anonymous namespace\))/);
  return open > 0 ? name.slice(0, open) : name;
}

/** Where a script is, from the project's dist/ or node_modules/ on (the checkout's own path says nothing). */
function shortPath(name: string): string {
  return name.replace(/(?:file:\/\/)?\/\S*?\/(dist|node_modules)\//, "$1/");
}

/** Self instructions by function name over the whole file; generated code named from the perf map. */
export function selfInstructions(callgrindFile: string, perfMapFile: string): Map<string, number> {
  const names = new Map<string, string>();
  const nameOf = (token: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(token);
    if (!match) return token;
    const [, id = "", name] = match;
    if (name !== undefined) names.set(id, name);
    return names.get(id) ?? token;
  };
  const self = new Map<string, number>();
  let current = "";
  let callCostNext = false;
  for (const line of readFileSync(callgrindFile, "utf8").split("\n")) {
    if (line.startsWith("fn=")) current = nameOf(line.slice(3).trim());
    else if (line.startsWith("cfn=")) nameOf(line.slice(4).trim());
    else if (line.startsWith("calls=")) callCostNext = true;
    else if (/^[\d+*-]/.test(line)) {
      // The line after calls= is the call's inclusive cost, already counted in the callee's own lines.
      // A cost line is its position, then each event's count in the events: order (Ir first), trailing zeros left out.
      if (callCostNext) callCostNext = false;
      else self.set(current, (self.get(current) ?? 0) + Number(line.split(" ")[1] ?? 0));
    }
  }
  const entries = readPerfMap(perfMapFile);
  const named = new Map<string, number>();
  for (const [name, cost] of self) {
    const address = /^0x([0-9a-f]+)$/.exec(name);
    const key = address ? jitName(entries, Number.parseInt(address[1] as string, 16)) : withoutParameters(name);
    named.set(key, (named.get(key) ?? 0) + cost);
  }
  return named;
}

/** The `summary:` line of a callgrind file: all instructions the dump covers. */
export function totalInstructions(callgrindFile: string): number {
  return summaryEvents(callgrindFile).Ir ?? 0;
}

/**
 * The `summary:` line by its event names (the `events:` line): Ir, and with cache and branch simulation
 * I1mr (first-level instruction cache misses), D1mr and D1mw (data cache read and write misses), ILmr,
 * DLmr, DLmw (last level), Bc and Bcm (conditional branches, mispredicted), Bi and Bim (indirect).
 */
export function summaryEvents(callgrindFile: string): Record<string, number> {
  const text = readFileSync(callgrindFile, "utf8");
  const names = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
  const counts = /^summary: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
  return Object.fromEntries(names.map((name, i) => [name, Number(counts[i] ?? 0)]));
}
