/**
 * `npm run build`'s last step: bundles the status page's browser code (the folder given, relative to
 * the working directory) next to the compiled assets module, where a compiled gateway reads it.
 *   node dist/gateway/http/status-page/build-bundle.js gateway/http/status-page/browser
 */
import { pathToFileURL } from "node:url";
import { writeStatusPageBundle } from "./assets.js";

const [sourceDir] = process.argv.slice(2);
if (sourceDir === undefined) throw new Error("usage: build-bundle.js <the status page's browser source folder>");
await writeStatusPageBundle(pathToFileURL(`${sourceDir.replace(/\/?$/, "/")}`));
