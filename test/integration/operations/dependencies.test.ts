/**
 * What the manifests promise: `npm ci` on every Node version the project supports prints no engine
 * warning (every locked package accepts the whole supported range), and the client package has no
 * runtime dependencies: the packages its subpath exports import are optional peer dependencies whose
 * ranges hold the versions this repository tests it with.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

interface Manifest {
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(`${root}/${path}`, "utf8")) as T;

describe("the manifests", () => {
  it("support, in every locked package, every Node version the project supports", () => {
    const supported = readJson<Manifest>("package.json").engines?.node ?? "";
    expect(semver.validRange(supported)).not.toBeNull();
    const lock = readJson<{ packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }> }>("package-lock.json");
    const narrower = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && !entry.optional && typeof entry.engines === "object" && !Array.isArray(entry.engines) && entry.engines.node !== undefined)
      .filter(([, entry]) => !semver.subset(supported, (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path} wants node ${(entry.engines as { node: string }).node}`);
    expect(narrower).toEqual([]);
  });

  it("declare, for the client package, no runtime dependency, and what its code imports as optional peers at tested versions", () => {
    const client = readJson<Manifest>("client/package.json");
    const sources = readdirSync(`${root}/client`).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    const imported = new Set<string>();
    for (const name of sources) {
      const text = readFileSync(`${root}/client/${name}`, "utf8");
      // A specifier held in a constant (`import(OTEL_API)`, so that bundlers leave an optional peer alone) counts too.
      const named = [...text.matchAll(/import\((\w+)\)/g)].map((call) => new RegExp(`const ${call[1]} = "([^".][^"]*)"`).exec(text)?.[1]);
      const literal = [...text.matchAll(/(?:from\s+|import\()\s*"([^".][^"]*)"/g)].map((match) => match[1]);
      for (const specifier of [...literal, ...named].filter((found): found is string => found !== undefined)) {
        if (specifier.startsWith("node:")) continue;
        imported.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] ?? specifier));
      }
    }
    expect(client.dependencies ?? {}).toEqual({});
    expect(Object.keys(client.peerDependencies ?? {}).sort()).toEqual([...imported].sort());
    const lock = readJson<{ packages: Record<string, { version?: string }> }>("package-lock.json");
    for (const [name, range] of Object.entries(client.peerDependencies ?? {})) {
      expect({ name, optional: client.peerDependenciesMeta?.[name]?.optional }).toEqual({ name, optional: true });
      expect({ name, tested: semver.satisfies(lock.packages[`node_modules/${name}`]?.version ?? "", range) }).toEqual({ name, tested: true });
    }
    expect(client.engines?.node).toBeDefined();
    expect(semver.subset(readJson<Manifest>("package.json").engines?.node ?? "", client.engines?.node ?? "")).toBe(true);
  });
});
