import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { selfInstructions, summaryEvents, totalInstructions } from "./callgrind-profile.js";

const dir = mkdtempSync(join(tmpdir(), "poolgate-callgrind-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The shape callgrind writes with --dump-instr=no: names compressed to "(id) name" on first use and
 * "(id)" after, positions (line numbers) before the cost, relative ones with + and -, and after each
 * calls= line the call's inclusive cost, which belongs to the callee.
 */
const CALLGRIND = `# callgrind format
version: 1
creator: callgrind-3.19.0
events: Ir
summary: 1000

fl=(1) ???
fn=(1) v8::internal::(anonymous namespace)::Invoke(v8::internal::Isolate*, int const&)
0 100
cfl=(1)
cfn=(2) 0x0000000000a00010
calls=1 0
0 650
fn=(2)
0 300
+2 50
cfn=(3) Builtins_StringAdd_CheckNone
calls=2 0
0 200
fn=(3)
0 200
fn=(4) 0x0000000000b00000
* 150
-1 0
`;

// A stale entry for the same address comes first: V8 reused the range, and the later one names it.
const PERF_MAP = `a00000 100 JS:*stale /work/main/dist/gateway/old.js:1:1
a00000 40 JS:*execute file:///work/main/dist/gateway/engines/postgres/connection.js:57:18
c00000 10 JS:*elsewhere /x/node_modules/pg/lib/client.js:1:1
`;

describe("callgrind self costs", () => {
  it("counts each function's own instructions, leaves call costs to the callee and names generated code from the perf map", () => {
    const callgrind = join(dir, "callgrind.out");
    const perfMap = join(dir, "perf.map");
    writeFileSync(callgrind, CALLGRIND);
    writeFileSync(perfMap, PERF_MAP);
    const self = selfInstructions(callgrind, perfMap);
    expect(Object.fromEntries(self)).toEqual({
      "v8::internal::(anonymous namespace)::Invoke": 100,
      "JS *execute dist/gateway/engines/postgres/connection.js:57:18": 350,
      Builtins_StringAdd_CheckNone: 200,
      "JS (code not in the perf map)": 150,
    });
    expect(totalInstructions(callgrind)).toBe(1000);
  });

  it("with cache and branch simulation, counts instructions by the first event and reads every event's total", () => {
    // Each cost line: its position, then Ir I1mr D1mr Bcm in that order; trailing zeros are left out.
    const simulated = `# callgrind format
events: Ir I1mr D1mr Bcm
summary: 1000 40 30 20

fn=(1) Builtins_LoadIC
0 600 10 25 5
cfn=(2) 0x0000000000a00010
calls=1 0
0 300 30 5 15
fn=(2)
0 250 30 5 15
+1 50
fn=(3) malloc
0
`;
    const callgrind = join(dir, "callgrind.simulated");
    writeFileSync(callgrind, simulated);
    writeFileSync(join(dir, "simulated.map"), PERF_MAP);
    expect(Object.fromEntries(selfInstructions(callgrind, join(dir, "simulated.map")))).toEqual({
      Builtins_LoadIC: 600,
      "JS *execute dist/gateway/engines/postgres/connection.js:57:18": 300,
      malloc: 0,
    });
    expect(summaryEvents(callgrind)).toEqual({ Ir: 1000, I1mr: 40, D1mr: 30, Bcm: 20 });
    expect(totalInstructions(callgrind)).toBe(1000);
  });

  it("reads a missing perf map as naming nothing", () => {
    const callgrind = join(dir, "callgrind.only");
    writeFileSync(callgrind, CALLGRIND);
    expect(selfInstructions(callgrind, join(dir, "absent.map")).get("JS (code not in the perf map)")).toBe(500);
  });
});
