/**
 * `@poolgate/client` as someone outside this repository gets it: built from client/ into a staging
 * folder of its own (so test files packing it at the same time never share a `dist/`), packed with
 * `npm pack`, and installed from the tarball into a new project in a temporary directory. Each call
 * makes its own project; `remove()` deletes it.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root: the first folder above this module with client/package.json (this module also runs compiled, from dist/). */
function findRepositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "client/package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("packed-client: no client/package.json above this module");
    dir = up;
  }
  return dir;
}

export const repositoryRoot = findRepositoryRoot();
const clientSources = join(repositoryRoot, "client");

export interface PackedClientProject {
  /** The consumer project, with the tarball installed in its node_modules. */
  dir: string;
  /** The tarball `npm pack` made. */
  tarball: string;
  /** Runs a command in the project; stdout as text (throws with stderr on a non-zero exit). */
  run(file: string, args: string[], env?: Record<string, string>): string;
  /** Writes a file in the project. */
  write(name: string, text: string): string;
  remove(): void;
}

/** Bytes under a path, recursively. */
export function sizeOf(path: string): number {
  return statSync(path).isDirectory() ? readdirSync(path).reduce((total, entry) => total + sizeOf(join(path, entry)), 0) : statSync(path).size;
}

function runIn(cwd: string, file: string, args: string[], env?: Record<string, string>): string {
  try {
    return execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  } catch (err) {
    const failure = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} ${args.join(" ")} failed: ${failure.message}\n${failure.stdout ?? ""}\n${failure.stderr ?? ""}`);
  }
}

/**
 * Packs the client and installs it into a new project (`type: "module"` unless told otherwise), with
 * `extra` packages (exact versions) installed beside it.
 */
export function installPackedClient(options: { extra?: string[]; type?: "module" | "commonjs" } = {}): PackedClientProject {
  const dir = mkdtempSync(join(tmpdir(), "poolgate-client-user-"));
  const staging = join(dir, ".staging");
  mkdirSync(staging);
  cpSync(join(clientSources, "package.json"), join(staging, "package.json"));
  cpSync(join(clientSources, "README.md"), join(staging, "README.md"));
  runIn(repositoryRoot, process.execPath, [join(repositoryRoot, "node_modules/typescript/bin/tsc"), "-p", join(clientSources, "tsconfig.build.json"), "--outDir", join(staging, "dist")]);
  const packed = runIn(staging, "npm", ["pack", "--ignore-scripts", "--pack-destination", dir, "--json", "--silent"]);
  const tarball = join(dir, (JSON.parse(packed) as { filename: string }[])[0]?.filename ?? "");
  rmSync(staging, { recursive: true, force: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "someone-elses-lambda", private: true, type: options.type ?? "module" }));
  runIn(dir, "npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarball, ...(options.extra ?? [])]);
  return {
    dir,
    tarball,
    run: (file, args, env) => runIn(dir, file, args, env),
    write: (name, text) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
