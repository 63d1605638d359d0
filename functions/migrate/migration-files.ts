/**
 * Versioned SQL files: `<version>_<name>.sql` in one directory per engine (`migrations/postgres/`,
 * `migrations/mysql/`), applied in ascending version order, each at most once. A file's SHA-256 is
 * recorded when it is applied, so an applied migration that was edited afterwards is refused instead
 * of silently diverging from the databases it already ran on.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One migration file. */
export interface Migration {
  /** The digits before the first underscore, e.g. "0001". */
  readonly version: string;
  /** The rest of the file name, e.g. "example_tables". */
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the file, hex. */
  readonly checksum: string;
}

const FILE_NAME = /^(\d{1,18})_([A-Za-z0-9_-]+)\.sql$/;

/** Thrown for a directory whose files cannot be read as migrations. */
export class MigrationFilesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationFilesError";
  }
}

/** Reads every migration in `directory`, in version order; other .sql names and duplicate versions are refused. */
export function loadMigrations(directory: string): Migration[] {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => name.endsWith(".sql"));
  } catch (err) {
    throw new MigrationFilesError(`cannot read the migrations directory ${directory}: ${(err as Error).message}`);
  }
  const migrations = names.map((fileName) => {
    const match = FILE_NAME.exec(fileName);
    if (!match?.[1] || !match[2]) throw new MigrationFilesError(`${fileName} is not named <version>_<name>.sql (e.g. 0002_add_orders.sql)`);
    const sql = readFileSync(join(directory, fileName), "utf8");
    return { version: match[1], name: match[2], sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
  migrations.sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < migrations.length; i++) {
    const [previous, current] = [migrations[i - 1], migrations[i]];
    if (previous && current && compareVersions(previous.version, current.version) === 0) {
      throw new MigrationFilesError(`two migrations have version ${current.version}: ${previous.version}_${previous.name}.sql and ${current.version}_${current.name}.sql`);
    }
  }
  return migrations;
}

/** Numeric order ("2" before "10"; "0002" equals "2"). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A checksum of a whole set of migrations (what a deployment carries). */
export function checksumOf(migrations: readonly Migration[]): string {
  const hash = createHash("sha256");
  for (const migration of migrations) hash.update(`${migration.version}:${migration.checksum}\n`);
  return hash.digest("hex");
}
