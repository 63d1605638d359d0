/**
 * The gateway's image: a supported Node.js LTS pinned by digest in every stage, and the RDS CA bundle
 * fetched with a checksum (a changed bundle fails the build instead of being trusted).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "./test-support.js";

const dockerfile = readFileSync(join(projectRoot, "Dockerfile"), "utf8");

describe("the Dockerfile", () => {
  it("builds every stage on Node.js 24 LTS, pinned by digest", () => {
    const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((match) => match[1]);
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases) expect(base).toMatch(/^node:24-[a-z]+-slim@sha256:[0-9a-f]{64}$/);
    expect(new Set(bases).size).toBe(1);
  });

  it("fetches the RDS CA bundle with a SHA-256 checksum and trusts only that file", () => {
    const add = dockerfile.split("\n").find((line) => line.includes("truststore.pki.rds.amazonaws.com"));
    expect(add).toMatch(/^ADD --chmod=444 --checksum=sha256:[0-9a-f]{64} https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem \/etc\/ssl\/certs\/rds-global-bundle\.pem$/);
    expect(dockerfile).toMatch(/NODE_EXTRA_CA_CERTS=\/etc\/ssl\/certs\/rds-global-bundle\.pem/);
  });
});
