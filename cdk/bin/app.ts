/** `cdk synth` / `cdk deploy` entry point (cdk.json). */
import { fileURLToPath } from "node:url";
import { buildPoolgateApp } from "../lib/app.js";

const { app } = buildPoolgateApp({ projectRoot: fileURLToPath(new URL("../..", import.meta.url)) });
app.synth();
