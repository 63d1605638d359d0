/**
 * A cluster's TLS setting, resolved once at start: the CA bundle is read here (never per session), so
 * a missing or unreadable file stops the start with a clear message instead of failing every
 * connect. The engines turn the result into their driver's options.
 */
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError } from "../config/load.js";
import type { DatabaseTlsConfig } from "../config/schema.js";

/**
 * disable: plain TCP. require: TLS, certificate not checked (encryption only). verify-full: TLS, the
 * chain checked against `ca` (default: Node's trust store and NODE_EXTRA_CA_CERTS) and the host name.
 */
export type DatabaseTls = { mode: "disable" } | { mode: "require" } | { mode: "verify-full"; ca: string | undefined };

function settingError(path: string, message: string): ConfigError {
  return new ConfigError(`invalid configuration:\n  - ${path}: ${message}`);
}

/** `where` names the setting in messages (clusters.<name>.tls). */
export function loadDatabaseTls(config: DatabaseTlsConfig | undefined, where: string): DatabaseTls | undefined {
  if (config === undefined) return undefined;
  if (config.mode !== "verify-full") {
    if (config.caFile !== undefined) throw settingError(`${where}.caFile`, `is only used with mode "verify-full" (mode is "${config.mode}")`);
    return { mode: config.mode };
  }
  if (config.caFile === undefined) return { mode: "verify-full", ca: undefined };
  let pem: string;
  try {
    pem = readFileSync(config.caFile, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw settingError(`${where}.caFile`, `cannot read ${config.caFile} (${code}); it must be a PEM bundle such as the RDS global bundle`);
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw settingError(`${where}.caFile`, `${config.caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  // Node's TLS skips a certificate it cannot parse without a word; a broken bundle must stop the start.
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch {
      throw settingError(`${where}.caFile`, `certificate ${i + 1} of ${blocks.length} in ${config.caFile} cannot be parsed`);
    }
  });
  return { mode: "verify-full", ca: pem };
}

/**
 * URL parameters that choose TLS on their own (PostgreSQL's sslmode, sslrootcert...). With a `tls`
 * setting they would be overridden without a word, so they are refused at start instead.
 */
export function urlTlsParameters(url: string): string[] {
  return [...new URL(url).searchParams.keys()].filter((key) => /^ssl|^uselibpqcompat$/i.test(key));
}
