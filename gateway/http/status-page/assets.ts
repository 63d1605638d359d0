/**
 * The status page's browser code as the page inlines it: `browser/main.ts` (and what it imports) bundled
 * into one script, and `browser/styles.css`, both by esbuild. `npm run build` writes the bundle next to
 * the compiled module (`bundle/`, by build-bundle.ts), and a compiled gateway reads it from there: the
 * production image has no esbuild. Run from its sources (tests, `npm run dev`), the gateway has no
 * bundle beside it and bundles the sources with esbuild's API instead, once per process.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** The status page's script and style sheet, ready to inline. */
export interface StatusPageAssets {
  script: string;
  css: string;
}

const SOURCE_DIR = new URL("./browser/", import.meta.url);
const BUNDLE_DIR = new URL("./bundle/", import.meta.url);
const SCRIPT_FILE = "status-page.js";
const CSS_FILE = "status-page.css";

/** Bundles the browser sources in `sourceDir` (by default the ones beside this module). */
export async function bundleStatusPage(sourceDir: URL = SOURCE_DIR): Promise<StatusPageAssets> {
  // A devDependency: only a gateway run from its sources (or the build) gets here.
  const { build } = await import("esbuild");
  const common = { bundle: true, write: false, charset: "utf8", legalComments: "none", logLevel: "silent" } as const;
  const [script, css] = await Promise.all([
    build({ entryPoints: [fileURLToPath(new URL("main.ts", sourceDir))], format: "iife", platform: "browser", target: "es2020", ...common }),
    build({ entryPoints: [fileURLToPath(new URL("styles.css", sourceDir))], target: "chrome100", ...common }),
  ]);
  return { script: onlyOutput(script.outputFiles, "script"), css: onlyOutput(css.outputFiles, "style sheet") };
}

function onlyOutput(files: readonly { text: string }[] | undefined, what: string): string {
  const [file, ...more] = files ?? [];
  if (file === undefined || more.length > 0) throw new Error(`esbuild made ${files?.length ?? 0} files of the status page's ${what}, not one`);
  return file.text;
}

/** Writes the bundle where a compiled gateway reads it (`npm run build`). */
export async function writeStatusPageBundle(sourceDir: URL, bundleDir: URL = BUNDLE_DIR): Promise<void> {
  const { mkdir, writeFile } = await import("node:fs/promises");
  const assets = await bundleStatusPage(sourceDir);
  await mkdir(bundleDir, { recursive: true });
  await writeFile(new URL(SCRIPT_FILE, bundleDir), assets.script);
  await writeFile(new URL(CSS_FILE, bundleDir), assets.css);
}

/** The bundle beside a compiled gateway, or the sources bundled now when there is none. */
export async function loadStatusPageAssets(): Promise<StatusPageAssets> {
  try {
    const [script, css] = await Promise.all([readFile(new URL(SCRIPT_FILE, BUNDLE_DIR), "utf8"), readFile(new URL(CSS_FILE, BUNDLE_DIR), "utf8")]);
    return { script, css };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return bundleStatusPage();
}
