import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchema } from "./schema.js";

type JsonSchema = { properties?: Record<string, JsonSchema>; additionalProperties?: JsonSchema | boolean };

function leafPaths(schema: JsonSchema, prefix: string): string[] {
  if (schema.properties)
    return Object.entries(schema.properties).flatMap(([key, child]) => leafPaths(child, prefix ? `${prefix}.${key}` : key));
  if (typeof schema.additionalProperties === "object") return leafPaths(schema.additionalProperties, `${prefix}.<name>`);
  return [prefix];
}

describe("configuration reference", () => {
  it("documents every configuration key in docs/configuration.md", () => {
    const readme = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const paths = leafPaths(z.toJSONSchema(configSchema, { io: "input" }) as JsonSchema, "");
    expect(paths.length).toBeGreaterThan(20);
    const documented = new Set([...readme.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((match) => match[1]));
    for (const path of paths) expect(documented.has(path), `docs/configuration.md row for ${path}`).toBe(true);
  });
});
