/**
 * Simulates AWS Secrets Manager's GetSecretValue on 127.0.0.1 (an ephemeral port), the way the SDK
 * speaks to it: AWS JSON 1.1 (POST /, `x-amz-target: secretsmanager.GetSecretValue`, body
 * {SecretId, VersionStage}). It holds secrets by ARN with a value per staging label (AWSCURRENT,
 * AWSPENDING) that a test changes mid-run, as a rotation does; a label no version carries is answered
 * with ResourceNotFoundException (400, `__type`), as the service does. It counts calls per stage.
 * It does NOT check SigV4 signatures: the tests give the SDK dummy credentials, and what is under
 * test is how the gateway uses the answers, not AWS authentication.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type StandInStage = "AWSCURRENT" | "AWSPENDING";

export interface SecretsManagerStandIn {
  /** http://127.0.0.1:<port> — for aws.secretsManagerEndpoint. */
  readonly url: string;
  /** Puts a value under a label (a new version when the value is new); undefined removes the label. */
  setStage(secretArn: string, stage: StandInStage, value: string | undefined): void;
  /** GetSecretValue calls received for the stage (all stages when none is named), answered or not. */
  calls(stage?: StandInStage): number;
  close(): Promise<void>;
}

interface Call {
  secretId: string;
  stage: string;
}

const JSON_11 = "application/x-amz-json-1.1";

export async function startSecretsManagerStandIn(): Promise<SecretsManagerStandIn> {
  const secrets = new Map<string, Map<string, string>>();
  const received: Call[] = [];

  const answer = (response: http.ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { "content-type": JSON_11, "x-amzn-requestid": createHash("sha1").update(String(received.length)).digest("hex") });
    response.end(JSON.stringify(body));
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || request.headers["x-amz-target"] !== "secretsmanager.GetSecretValue") {
        answer(response, 400, { __type: "UnknownOperationException", message: `unsupported: ${String(request.headers["x-amz-target"])}` });
        return;
      }
      let body: { SecretId?: unknown; VersionStage?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        answer(response, 400, { __type: "SerializationException", message: "body is not JSON" });
        return;
      }
      const secretId = String(body.SecretId);
      const stage = typeof body.VersionStage === "string" ? body.VersionStage : "AWSCURRENT";
      received.push({ secretId, stage });
      const stages = secrets.get(secretId);
      if (stages === undefined) {
        answer(response, 400, { __type: "ResourceNotFoundException", message: "Secrets Manager can't find the specified secret." });
        return;
      }
      const value = stages.get(stage);
      if (value === undefined) {
        answer(response, 400, {
          __type: "ResourceNotFoundException",
          message: `Secrets Manager can't find the specified secret value for staging label: ${stage}`,
        });
        return;
      }
      const labels = [...stages].filter(([, each]) => each === value).map(([label]) => label);
      answer(response, 200, {
        ARN: secretId,
        Name: secretId.split(":").at(-1),
        // Same value, same version: moving AWSCURRENT onto the pending value keeps its version id.
        VersionId: createHash("sha256").update(value).digest("hex").slice(0, 32),
        SecretString: value,
        VersionStages: labels,
        CreatedDate: Math.floor(Date.now() / 1000),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setStage(secretArn, stage, value) {
      let stages = secrets.get(secretArn);
      if (stages === undefined) {
        stages = new Map();
        secrets.set(secretArn, stages);
      }
      if (value === undefined) stages.delete(stage);
      else stages.set(stage, value);
    },
    calls: (stage) => received.filter((call) => stage === undefined || call.stage === stage).length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
