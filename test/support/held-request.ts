/**
 * An HTTP request whose headers reach the server now and whose body only when the test says so: a
 * request that is certainly under way when something happens to the server (it starts draining), so
 * that the route answers it in that state instead of the connection being refused or closed as idle.
 */
import http from "node:http";

export interface HeldRequest {
  /** Resolves once the server has parsed the request's headers (its 'request' event). */
  readonly arrived: Promise<void>;
  /** Sends the body and resolves with the answer. */
  finish(): Promise<{ status: number; body: unknown }>;
}

export function holdRequest(server: http.Server, baseUrl: string, path: string, body: unknown): HeldRequest {
  const text = JSON.stringify(body);
  const arrived = new Promise<void>((resolve) => {
    const onRequest = (request: http.IncomingMessage) => {
      if (request.url !== path) return;
      server.off("request", onRequest);
      resolve();
    };
    server.on("request", onRequest);
  });
  const url = new URL(path, baseUrl);
  const request = http.request(url, { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } });
  const answer = new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    request.on("response", (response) => {
      let received = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (received += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: received.length > 0 ? (JSON.parse(received) as unknown) : undefined }));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
  request.flushHeaders();
  return {
    arrived,
    finish: () => {
      request.end(text);
      return answer;
    },
  };
}
