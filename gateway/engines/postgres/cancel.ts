/**
 * Sends a PostgreSQL CancelRequest for a backend on a fresh socket: the only way to stop a statement
 * that is already running. Best effort: errors are swallowed, the caller keeps its own deadline.
 *
 * The server answers nothing: it "will process this request and then close the connection", and a
 * cancel that "arrives after the backend has finished processing the query ... will have no effect"
 * (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-CANCELING-REQUESTS; on
 * Aurora PostgreSQL the cancel is the same SIGINT to the backend that pg_cancel_backend sends:
 * https://repost.aws/knowledge-center/rds-cancel-long-running-queries). So the server closing the
 * socket after the request went out is the one sign that the cancel was delivered to the backend.
 */
import net from "node:net";

const CANCEL_REQUEST_CODE = 80877102;

export interface CancelTarget {
  host: string;
  port: number;
  processId: number;
  secretKey: number | Buffer;
}

/**
 * Resolves true once the server closed the socket after the request was sent (the cancel was
 * delivered to the backend), false when that is not known: an error, or no close within `timeoutMs`.
 */
export function sendCancelRequest(target: CancelTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const key = typeof target.secretKey === "number" ? null : target.secretKey;
    const packet = Buffer.alloc(12 + (key ? key.length : 4));
    packet.writeInt32BE(packet.length, 0);
    packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    packet.writeInt32BE(target.processId, 8);
    if (key) key.copy(packet, 12);
    else packet.writeInt32BE(target.secretKey as number, 12);

    const socket = target.host.startsWith("/")
      ? net.connect(`${target.host}/.s.PGSQL.${target.port}`)
      : net.connect(target.port, target.host);
    let sent = false;
    const finish = (delivered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(delivered);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once("connect", () => {
      sent = true;
      socket.end(packet);
    });
    socket.once("close", (hadError: boolean) => finish(sent && !hadError));
    socket.once("error", () => finish(false));
  });
}
