/**
 * V8 settings for a long-lived server, set before any other module of the gateway is evaluated
 * (main.ts imports this module first, so that no code is compiled and no allocation site decided yet).
 *
 * No allocation-site pretenuring: under a steady load V8 decided to allocate the objects of hot
 * allocation sites (result rows, statement objects) directly in the old generation. Those die within
 * milliseconds, but an old object is only known dead at the next full collection; until then the young
 * objects it points to (the rest of the request) are kept alive through the remembered set, copied by
 * every scavenge and promoted in turn. Measured under the bench's load (32 callers, PostgreSQL point
 * selects, `--trace-gc-nvp`): 274 → 16 bytes promoted per request, 332 → 197 KB surviving each
 * scavenge, scavenge pauses 2.4 → 1.5 ms.
 */
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--no-allocation-site-pretenuring");
