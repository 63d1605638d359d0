/**
 * Throwaway TLS material made with the openssl command line, in a directory the caller owns and
 * removes: a test CA, a server certificate it signed for 127.0.0.1 and localhost, and a second,
 * unrelated CA (what a client trusting the wrong bundle has). Valid for two days.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestCertificates {
  /** PEM of the CA that signed the server certificate. */
  caFile: string;
  /** PEM of a CA that signed nothing the server has. */
  otherCaFile: string;
  serverCertFile: string;
  serverKeyFile: string;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run("openssl", args);
  } catch (err) {
    throw new Error(`openssl ${args[0] ?? ""} failed (the TLS tests need the openssl command): ${(err as Error).message}`);
  }
}

async function makeCa(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await openssl([
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", key, "-out", cert, "-days", "2", "-subj", `/CN=${name}`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return { cert, key };
}

/** `subjectAltName` in openssl's syntax; default IP:127.0.0.1,DNS:localhost. */
export async function makeTestCertificates(dir: string, subjectAltName = "IP:127.0.0.1,DNS:localhost"): Promise<TestCertificates> {
  const ca = await makeCa(dir, "poolgate-test-ca");
  const other = await makeCa(dir, "poolgate-other-ca");
  const serverKeyFile = join(dir, "server.key");
  const csr = join(dir, "server.csr");
  const serverCertFile = join(dir, "server.crt");
  const extensions = join(dir, "server.ext");
  writeFileSync(
    extensions,
    `subjectAltName=${subjectAltName}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
  );
  await openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", serverKeyFile, "-out", csr, "-subj", "/CN=poolgate-test-server"]);
  await openssl([
    "x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial",
    "-out", serverCertFile, "-days", "2", "-extfile", extensions,
  ]);
  return { caFile: ca.cert, otherCaFile: other.cert, serverCertFile, serverKeyFile };
}
