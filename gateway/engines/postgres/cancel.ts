/**
 * Sends a PostgreSQL CancelRequest for a backend on a fresh socket: the only way to stop a statement
 * that is already running. Best effort: errors are swallowed, the caller keeps its own deadline.
 */
import net from "node:net";

const CANCEL_REQUEST_CODE = 80877102;

export interface CancelTarget {
  host: string;
  port: number;
  processId: number;
  secretKey: number | Buffer;
}

export function sendCancelRequest(target: CancelTarget, timeoutMs: number): Promise<void> {
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
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.once("connect", () => socket.end(packet));
    socket.once("close", finish);
    socket.once("error", finish);
  });
}
