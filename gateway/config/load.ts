/**
 * Loads the configuration once: defaults < JSON file (POOLGATE_CONFIG) < environment. The only module
 * that reads process.env. The result is deeply frozen and passed down.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { configSchema, type GatewayConfig } from "./schema.js";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const envSchema = z.object({
  POOLGATE_CONFIG: z.string().min(1).optional(),
  /** The config file's contents inline (containers set it from the deployment), instead of a path. */
  POOLGATE_CONFIG_JSON: z.string().min(1).optional(),
  POOLGATE_WRITER_URL: z.string().min(1).optional(),
  POOLGATE_READER_URLS: z.string().optional(),
  /** Database credentials apart from the URLs (ECS secrets): fill every URL of the default cluster. */
  POOLGATE_DB_USER: z.string().min(1).optional(),
  POOLGATE_DB_PASSWORD: z.string().optional(),
  /** The peer key (ECS secret): `peers.key`. */
  POOLGATE_PEER_KEY: z.string().min(1).optional(),
  /** The result cache's Valkey password (ECS secret): filled into `cache.valkey.url`. */
  POOLGATE_VALKEY_PASSWORD: z.string().min(1).optional(),
  POOLGATE_DATA_DIR: z.string().min(1).optional(),
  PORT: z.string().regex(/^\d+$/, "PORT must be a number").optional(),
  HOST: z.string().min(1).optional(),
  LOG_LEVEL: z.string().min(1).optional(),
});

type Json = { [key: string]: unknown };

function readConfigFile(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  return parseConfigText(text, `config file ${path}`);
}

function parseConfigText(text: string, where: string): Json {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError(`${where} must hold a JSON object`);
    return parsed as Json;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
}

function section(target: Json, key: string): Json {
  const existing = target[key];
  if (typeof existing === "object" && existing !== null && !Array.isArray(existing)) return existing as Json;
  const created: Json = {};
  target[key] = created;
  return created;
}

/** Lays the environment over the file's settings. */
function applyEnv(raw: Json, env: z.infer<typeof envSchema>): Json {
  if (env.HOST !== undefined) section(raw, "server").host = env.HOST;
  if (env.PORT !== undefined) section(raw, "server").port = Number(env.PORT);
  if (env.LOG_LEVEL !== undefined) section(raw, "log").level = env.LOG_LEVEL;
  if (env.POOLGATE_DATA_DIR !== undefined) section(raw, "embedded").dataDir = env.POOLGATE_DATA_DIR;
  if (env.POOLGATE_PEER_KEY !== undefined) section(raw, "peers").key = env.POOLGATE_PEER_KEY;
  const defaultCluster = () => section(section(raw, "clusters"), typeof raw.defaultCluster === "string" ? raw.defaultCluster : "default");
  if (env.POOLGATE_WRITER_URL !== undefined) defaultCluster().writerUrl = env.POOLGATE_WRITER_URL;
  if (env.POOLGATE_READER_URLS !== undefined) {
    defaultCluster().readerUrls = env.POOLGATE_READER_URLS.split(",")
      .map((url) => url.trim())
      .filter((url) => url.length > 0);
  }
  if (env.POOLGATE_DB_USER !== undefined || env.POOLGATE_DB_PASSWORD !== undefined) {
    const cluster = defaultCluster();
    const withCredentials = (url: unknown) => (typeof url === "string" ? credentialsInto(url, env.POOLGATE_DB_USER, env.POOLGATE_DB_PASSWORD) : url);
    cluster.writerUrl = withCredentials(cluster.writerUrl);
    if (Array.isArray(cluster.readerUrls)) cluster.readerUrls = cluster.readerUrls.map(withCredentials);
  }
  if (env.POOLGATE_VALKEY_PASSWORD !== undefined) {
    const valkey = section(section(raw, "cache"), "valkey");
    if (typeof valkey.url !== "string") throw new ConfigError("POOLGATE_VALKEY_PASSWORD is set, but cache.valkey.url is not: the password goes into that URL");
    valkey.url = credentialsInto(valkey.url, undefined, env.POOLGATE_VALKEY_PASSWORD);
  }
  return raw;
}

/** A database (or Valkey) URL with the user and password replaced (the URL stays unparseable if it was). */
function credentialsInto(url: string, user: string | undefined, password: string | undefined): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (user !== undefined) parsed.username = encodeURIComponent(user);
  if (password !== undefined) parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

function formatIssues(error: z.ZodError, source: string): string {
  const lines = error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "(root)";
    return `  - ${path}: ${issue.message}`;
  });
  return `invalid configuration (${source}):\n${lines.join("\n")}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Validates a config object (file contents, or what a test passes) and checks cross-field rules. */
export function parseConfig(raw: unknown, source = "config"): GatewayConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(formatIssues(result.error, source));
  const config = result.data;
  const names = Object.keys(config.clusters);
  if (names.length > 0 && !names.includes(config.defaultCluster)) {
    throw new ConfigError(
      `invalid configuration (${source}):\n  - defaultCluster: "${config.defaultCluster}" is not one of the configured clusters (${names.join(", ")})`,
    );
  }
  for (const [arn, resource] of Object.entries(config.dataApi.resources)) {
    if (!names.includes(resource.cluster)) {
      throw new ConfigError(
        `invalid configuration (${source}):\n  - dataApi.resources["${arn}"].cluster: "${resource.cluster}" is not one of the configured clusters (${names.join(", ") || "none"})`,
      );
    }
  }
  for (const [principal, grants] of Object.entries(config.auth.principals)) {
    for (const cluster of Object.keys(grants.clusters)) {
      if (cluster !== "*" && names.length > 0 && !names.includes(cluster)) {
        throw new ConfigError(
          `invalid configuration (${source}):\n  - auth.principals["${principal}"].clusters: "${cluster}" is not one of the configured clusters (${names.join(", ")})`,
        );
      }
    }
  }
  for (const [name, cluster] of Object.entries(config.clusters)) {
    if (cluster.credentials?.source === "iam" && cluster.tls?.mode !== "verify-full" && cluster.tls?.mode !== "require") {
      throw new ConfigError(
        `invalid configuration (${source}):\n  - clusters.${name}.tls: IAM authentication tokens are only accepted over TLS; set tls.mode to "verify-full" (with the RDS CA bundle)`,
      );
    }
  }
  const authenticated = config.auth.iam !== undefined || config.auth.bearer !== undefined;
  if (!authenticated && !isLoopback(config.server.host)) {
    throw new ConfigError(
      `invalid configuration (${source}):\n  - server.host: "${config.server.host}" is not a loopback address, and no caller authentication is configured; ` +
        "set auth.iam or auth.bearer (see docs/security-and-logins.md), or listen on 127.0.0.1",
    );
  }
  if (config.statements.defaultTimeoutMs > config.statements.maxTimeoutMs) {
    throw new ConfigError(
      `invalid configuration (${source}):\n  - statements.defaultTimeoutMs (${config.statements.defaultTimeoutMs}) exceeds statements.maxTimeoutMs (${config.statements.maxTimeoutMs})`,
    );
  }
  return deepFreeze(config);
}

/** Reads env (and the file it names), validates, freezes. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const envResult = envSchema.safeParse(environment);
  if (!envResult.success) throw new ConfigError(formatIssues(envResult.error, "environment"));
  const env = envResult.data;
  if (env.POOLGATE_CONFIG !== undefined && env.POOLGATE_CONFIG_JSON !== undefined) {
    throw new ConfigError("set POOLGATE_CONFIG (a file) or POOLGATE_CONFIG_JSON (its contents), not both");
  }
  const raw =
    env.POOLGATE_CONFIG !== undefined
      ? readConfigFile(env.POOLGATE_CONFIG)
      : env.POOLGATE_CONFIG_JSON !== undefined
        ? parseConfigText(env.POOLGATE_CONFIG_JSON, "POOLGATE_CONFIG_JSON")
        : {};
  const source = env.POOLGATE_CONFIG !== undefined ? `${env.POOLGATE_CONFIG} + environment` : env.POOLGATE_CONFIG_JSON !== undefined ? "POOLGATE_CONFIG_JSON + environment" : "environment";
  return parseConfig(applyEnv(raw, env), source);
}

/** Whether a listen address accepts connections from this machine only. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(?:\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(bare);
}

/** A URL with its password masked, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable url)";
  }
}
