import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checksumOf, compareVersions, loadMigrations, MigrationFilesError } from "./migration-files.js";

const dirs: string[] = [];
function directory(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "poolgate-migration-files-"));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("migration files", () => {
  it("are read in numeric version order with their checksums, other files ignored", () => {
    const migrations = loadMigrations(directory({ "10_later.sql": "select 10;", "2_second.sql": "select 2;", "0001_first.sql": "select 1;", "README.md": "notes" }));
    expect(migrations.map((m) => `${m.version}_${m.name}`)).toEqual(["0001_first", "2_second", "10_later"]);
    expect(migrations[0]?.checksum).toBe(createHash("sha256").update("select 1;").digest("hex"));
    expect(migrations[0]?.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(checksumOf(migrations)).not.toBe(checksumOf(migrations.slice(1)));
  });

  it("refuse a misnamed file and two files of one version, naming them", () => {
    expect(() => loadMigrations(directory({ "first.sql": "select 1;" }))).toThrow(/first\.sql is not named <version>_<name>\.sql/);
    expect(() => loadMigrations(directory({ "1_a.sql": "select 1;", "0001_b.sql": "select 1;" }))).toThrow(MigrationFilesError);
    expect(() => loadMigrations(directory({ "1_a.sql": "select 1;", "0001_b.sql": "select 1;" }))).toThrow(/two migrations have version/);
    expect(() => loadMigrations(join(tmpdir(), "no-such-migrations-dir"))).toThrow(/cannot read the migrations directory/);
  });

  it("compare versions as numbers", () => {
    expect(compareVersions("2", "10")).toBeLessThan(0);
    expect(compareVersions("0002", "2")).toBe(0);
    expect(compareVersions("100000000000000000", "99")).toBeGreaterThan(0);
  });
});
