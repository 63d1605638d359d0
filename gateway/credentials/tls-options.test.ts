import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../config/load.js";
import { loadDatabaseTls, urlTlsParameters } from "./tls-options.js";

const dir = mkdtempSync(join(tmpdir(), "poolgate-tls-options-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A real certificate (the first of Node's own roots): only its parsing matters here. */
const PEM = `${rootCertificates[0] ?? ""}\n`;

describe("loadDatabaseTls", () => {
  it("leaves TLS to the URL when the setting is absent", () => {
    expect(loadDatabaseTls(undefined, "clusters.a.tls")).toBeUndefined();
  });

  it("passes disable and require through, and verify-full without a bundle trusts Node's store", () => {
    expect(loadDatabaseTls({ mode: "disable" }, "clusters.a.tls")).toEqual({ mode: "disable" });
    expect(loadDatabaseTls({ mode: "require" }, "clusters.a.tls")).toEqual({ mode: "require" });
    expect(loadDatabaseTls({ mode: "verify-full" }, "clusters.a.tls")).toEqual({ mode: "verify-full", ca: undefined });
  });

  it("reads the CA bundle once, at start", () => {
    const file = join(dir, "bundle.pem");
    writeFileSync(file, PEM);
    expect(loadDatabaseTls({ mode: "verify-full", caFile: file }, "clusters.a.tls")).toEqual({ mode: "verify-full", ca: PEM });
  });

  it("stops the start with the setting's path when the bundle is missing or holds no certificate", () => {
    const missing = join(dir, "missing.pem");
    expect(() => loadDatabaseTls({ mode: "verify-full", caFile: missing }, "clusters.a.tls")).toThrow(ConfigError);
    expect(() => loadDatabaseTls({ mode: "verify-full", caFile: missing }, "clusters.a.tls")).toThrow(
      `clusters.a.tls.caFile: cannot read ${missing} (ENOENT)`,
    );
    const empty = join(dir, "empty.pem");
    writeFileSync(empty, "not a certificate");
    expect(() => loadDatabaseTls({ mode: "verify-full", caFile: empty }, "clusters.a.tls")).toThrow("holds no PEM certificate");
    const broken = join(dir, "broken.pem");
    writeFileSync(broken, `${PEM}-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n`);
    expect(() => loadDatabaseTls({ mode: "verify-full", caFile: broken }, "clusters.a.tls")).toThrow(`certificate 2 of 2 in ${broken} cannot be parsed`);
  });

  it("refuses a bundle with a mode that would not use it", () => {
    expect(() => loadDatabaseTls({ mode: "require", caFile: "/x.pem" }, "clusters.a.tls")).toThrow('is only used with mode "verify-full"');
  });
});

describe("urlTlsParameters", () => {
  it("names the URL parameters that choose TLS on their own", () => {
    expect(urlTlsParameters("postgres://u:p@h/db?sslmode=require&application_name=x&sslrootcert=/ca.pem")).toEqual(["sslmode", "sslrootcert"]);
    expect(urlTlsParameters("postgres://u:p@h/db?uselibpqcompat=true")).toEqual(["uselibpqcompat"]);
    expect(urlTlsParameters("mysql://u:p@h/db")).toEqual([]);
  });
});
