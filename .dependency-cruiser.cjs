// The import boundaries of ARCHITECTURE.md ("Folders and their jobs"), checked by `npm run lint`
// (depcruise) so that the table cannot drift from the code. Two kinds of rule:
//   - layers: every folder of gateway/ has a rank; a module imports only ranks at or below its own,
//     and never a sibling folder of the same rank, so the folder graph has no cycle by construction;
//   - the table's "knows nothing of" column, where a rank alone does not say it (http/ reads engine
//     result types but no engine; the pool knows no dialect; config/ and schemas/ stand alone).
// Plus: no file imports itself through others (no circle). Tests are outside the rules: a test may
// reach anything it tests through. tools/boundaries.test.ts cruises a fixture tree with these rules
// and expects each crossing to fail. To see the folder graph: `npx depcruise gateway --config
// .dependency-cruiser.cjs --collapse "^gateway/[^/]+" --output-type text`.
/* global module */

/** Lowest first. A folder may import the rows before its own, never its own row's other folders. */
const LAYERS = [
  ["schemas/"],
  ["gateway/clock.ts", "gateway/logger.ts", "gateway/promise-from.ts", "gateway/v8-flags.ts", "gateway/errors.ts", "gateway/config/", "gateway/aws/"],
  ["gateway/events.ts", "gateway/failure-meaning.ts", "gateway/credentials/", "gateway/tracing/"],
  ["gateway/engines/"],
  ["gateway/topology/", "gateway/pool/", "gateway/cache/", "gateway/results/"],
  ["gateway/routing/", "gateway/idempotency/"],
  ["gateway/execution/"],
  ["gateway/auth/", "gateway/clusters/"],
  ["gateway/data-api/", "gateway/neon/", "gateway/planetscale/", "gateway/observability/", "gateway/peers/"],
  ["gateway/http/"],
  ["gateway/app.ts"],
  ["gateway/main.ts"],
];

/** @param {string} text */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** A path regex for one entry: a folder's files (any depth) or one file. @param {string} entry */
const pattern = (entry) => (entry.endsWith("/") ? `^${escape(entry)}` : `^${escape(entry)}$`);
/** @param {string[]} entries */
const anyOf = (entries) => entries.map(pattern).join("|");
const TESTS = "\\.test\\.ts$";

const layerRules = LAYERS.flatMap((row, rank) => {
  const higher = LAYERS.slice(rank + 1).flat();
  return row.flatMap((entry) => {
    const above = [...higher, ...row.filter((other) => other !== entry)];
    if (above.length === 0) return [];
    return [{
    name: `layer:${entry}`,
    comment: `${entry} (layer ${rank} of .dependency-cruiser.cjs, ARCHITECTURE.md's table) imports only the layers below it and its own folder`,
    severity: "error",
    from: { path: pattern(entry), pathNot: TESTS },
    to: { path: anyOf(above) },
    }];
  });
});

/** Every gateway file must sit in a layer, so a new folder is placed deliberately. */
const placed = {
  name: "layer:unplaced",
  comment: "every gateway/ module belongs to a row of LAYERS in .dependency-cruiser.cjs (and a row of ARCHITECTURE.md's table)",
  severity: "error",
  from: { path: "^gateway/", pathNot: `${anyOf(LAYERS.flat())}|${TESTS}|\\.mjs$` },
  to: {},
};

const knowsNothingOf = [
  {
    name: "endpoints-read-only-outside-topology",
    comment: "only topology/ writes an endpoint: everyone else gets the read-only Endpoint of topology/endpoint.ts, never the record",
    severity: "error",
    from: { path: "^gateway/", pathNot: `^gateway/topology/|${TESTS}` },
    to: { path: "^gateway/topology/endpoint-record\\.ts$" },
  },
  {
    name: "http-knows-no-engine",
    comment: "http/ reads the result types engines/engine.ts declares and JSON kept as text (json-text.ts), never an engine, a session or a dialect",
    severity: "error",
    from: { path: "^gateway/http/", pathNot: TESTS },
    to: { path: "^gateway/engines/", pathNot: "^gateway/engines/json-text\\.ts$", dependencyTypesNot: ["type-only"] },
  },
  {
    name: "http-engine-types-only",
    comment: "http/ may name engine result types, from the engine interface only",
    severity: "error",
    from: { path: "^gateway/http/", pathNot: TESTS },
    to: { path: "^gateway/engines/", pathNot: "^gateway/engines/(engine|statement-result|json-text)\\.ts$" },
  },
  {
    name: "http-knows-no-pool",
    comment: "http/ knows nothing of pools",
    severity: "error",
    from: { path: "^gateway/http/", pathNot: TESTS },
    to: { path: "^gateway/pool/" },
  },
  {
    name: "data-api-knows-no-session",
    comment: "data-api/ asks the pipeline; it knows nothing of pools or sessions",
    severity: "error",
    from: { path: "^gateway/data-api/", pathNot: TESTS },
    to: { path: "^gateway/pool/" },
  },
  {
    name: "auth-knows-no-sql",
    comment: "auth/ knows nothing of SQL",
    severity: "error",
    from: { path: "^gateway/auth/", pathNot: TESTS },
    to: { path: "^gateway/engines/" },
  },
  {
    name: "core-knows-no-dialect",
    comment: "the pool, routing and topology know an engine only by its interface; dialects stay in engines/<engine>/",
    severity: "error",
    from: { path: "^gateway/(pool|routing|topology)/", pathNot: TESTS },
    to: { path: "^gateway/engines/(postgres|mysql|embedded)/" },
  },
  {
    name: "config-stands-alone",
    comment: "config/ knows nothing of the rest of the gateway (it reads the wire schemas at most)",
    severity: "error",
    from: { path: "^gateway/config/", pathNot: TESTS },
    to: { path: "^(gateway|client|functions|cdk)/", pathNot: "^gateway/config/" },
  },
  {
    name: "schemas-stand-alone",
    comment: "schemas/ (wire types, zod only) knows nothing else of the project",
    severity: "error",
    from: { path: "^schemas/", pathNot: TESTS },
    to: { path: "^(gateway|client|functions|cdk|tools|test)/" },
  },
  {
    name: "client-knows-wire-types-only",
    comment: "the client SDK knows the wire types (schemas/), not the gateway's code",
    severity: "error",
    from: { path: "^client/", pathNot: TESTS },
    to: { path: "^(gateway|functions|cdk|tools|test)/" },
  },
  {
    name: "outside-talks-http-and-config",
    comment: "functions/ and cdk/ know the gateway by HTTP and its config only",
    severity: "error",
    from: { path: "^(functions|cdk)/", pathNot: TESTS },
    to: { path: "^gateway/", pathNot: "^gateway/config/" },
  },
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no module reaches itself through its imports",
      severity: "error",
      from: { pathNot: TESTS },
      to: { circular: true },
    },
    ...layerRules,
    placed,
    ...knowsNothingOf,
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    // `import type` counts: a circle of types is still a circle for a reader.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|cdk\\.out)/|^client/dist/" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], extensions: [".ts", ".js", ".mjs", ".cjs", ".json"] },
  },
};
