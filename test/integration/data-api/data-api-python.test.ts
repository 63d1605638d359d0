/**
 * docs/data-api-python.md's boto3 recipe, run as written: its first Python code block is written to a
 * temp dir as `poolgate_rds_data.py` and driven by test/support/boto3-recipe-driver.py with the machine's
 * python3 and boto3, against a gateway on PostgreSQL and on MariaDB, authenticated by a bearer token and
 * by an IAM proof (verified through the STS stand-in).
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { startStsStandIn, type StsStandIn } from "../../support/sts-standin.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const AUDIENCE = "poolgate-python";
const REGION = "eu-west-1";
const ACCOUNT = "111122223333";
const TOKEN = "python-app-token-0123456789abcdef";
const ROLE = { accessKeyId: "ASIAPOOLGATEPY000001", secretAccessKey: "python-secret/EXAMPLE+0001", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLEpython" };

/** The recipe module: the first ```python block of the doc, exactly as a reader copies it. */
function recipeModule(): string {
  const doc = readFileSync(path.join(ROOT, "docs/data-api-python.md"), "utf8");
  const block = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error("docs/data-api-python.md has no ```python block");
  return block;
}

async function requireBoto3(): Promise<void> {
  try {
    await run("python3", ["-c", "import boto3"]);
  } catch (err) {
    throw new Error(`python3 with boto3 is needed for the boto3 recipe test (Debian: apt-get install python3-boto3; or pip install boto3): ${(err as Error).message}`);
  }
}

interface Seen {
  without_hook: string;
  inserted: number;
  batch_results: number;
  commit: string;
  rollback: string;
  columns: string[];
  rows: [number, string][];
  json_rows: { id: number; title: string }[];
  duplicate: string;
}

for (const engine of ["postgres", "mysql"] as const) {
  describe(`the boto3 recipe on ${engine}`, () => {
    let gw: TestGateway;
    let sts: StsStandIn;
    let tokens: TokensFile;
    let drop: () => Promise<void>;
    let dir: string;

    beforeAll(async () => {
      await requireBoto3();
      dir = mkdtempSync(path.join(tmpdir(), "poolgate-boto3-"));
      writeFileSync(path.join(dir, "poolgate_rds_data.py"), recipeModule());
      copyFileSync(path.join(ROOT, "test/support/boto3-recipe-driver.py"), path.join(dir, "driver.py"));
      const db = engine === "postgres" ? await createTestDatabase() : await createTestMysqlDatabase();
      drop = () => db.drop();
      tokens = writeTokensFile({ app: TOKEN });
      sts = await startStsStandIn([{ ...ROLE, arn: `arn:aws:sts::${ACCOUNT}:assumed-role/python-app/python-fn` }]);
      gw = await startTestGateway({
        clusters: { default: { writerUrl: db.url } },
        auth: {
          bearer: { tokensFile: tokens.path },
          iam: { audience: AUDIENCE, regions: [REGION], stsEndpoint: sts.url, accounts: [ACCOUNT] },
          principals: {
            app: { clusters: { default: "read-write" } },
            [`arn:aws:iam::${ACCOUNT}:role/python-app`]: { clusters: { default: "read-write" } },
          },
        },
      });
    });

    afterAll(async () => {
      await gw?.stop();
      await sts?.close();
      await drop?.();
      tokens?.remove();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function drive(settings: Record<string, string>): Promise<Seen> {
      const { stdout } = await run("python3", [path.join(dir, "driver.py")], {
        cwd: dir,
        // No AWS profile, config or metadata lookups from the machine leak in.
        env: { PATH: process.env.PATH ?? "", HOME: dir, AWS_EC2_METADATA_DISABLED: "true", GATEWAY_URL: gw.baseUrl, REGION, ...settings },
      });
      return JSON.parse(stdout) as Seen;
    }

    const expected: Seen = {
      without_hook: "AccessDeniedException",
      inserted: 1,
      batch_results: 2,
      commit: "Transaction Committed",
      rollback: "Rollback Complete",
      columns: ["id", "title"],
      rows: [
        [1, "changed"],
        [2, "second"],
        [3, "third"],
      ],
      json_rows: [
        { id: 1, title: "changed" },
        { id: 2, title: "second" },
        { id: 3, title: "third" },
      ],
      duplicate: "DatabaseErrorException",
    };

    it("with a bearer token: statements, a batch, transactions, JSON records and errors", async () => {
      const seen = await drive({ AUTH: "bearer", TOKEN, TABLE: "py_bearer", AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret" });
      expect(seen).toEqual(expected);
    });

    it("with an IAM proof signed by botocore and verified by STS", async () => {
      sts.reset();
      const seen = await drive({ AUTH: "iam", AUDIENCE, TABLE: "py_iam", AWS_ACCESS_KEY_ID: ROLE.accessKeyId, AWS_SECRET_ACCESS_KEY: ROLE.secretAccessKey, AWS_SESSION_TOKEN: ROLE.sessionToken });
      expect(seen).toEqual(expected);
      // The proof is reused: one STS call for the whole run.
      expect(sts.calls).toBe(1);
    });
  });
}
