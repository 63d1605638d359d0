/**
 * The wire half of the Aurora MySQL stand-in (aurora-mysql-standin.ts): a forwarder in front of one
 * MariaDB instance that shows the gateway's login what Aurora MySQL shows it, where MariaDB cannot
 * (no tables in information_schema, no new system variables or global functions):
 *
 * - the server's greeting names a MySQL 8.0 server, as Aurora MySQL 3 does (so the gateway takes it
 *   for MySQL, not MariaDB, and reads no MariaDB GTID variables);
 * - in each statement the client sends (COM_QUERY, COM_STMT_PREPARE), Aurora's names become the
 *   stand-in's: `information_schema.replica_host_status` its table in the `aurora_standin` database,
 *   `@@aurora_server_id` this instance's id, `aurora_version()` the version; `@@global.gtid_mode`
 *   answers 'OFF' (Aurora MySQL's default: no GTID position); MySQL 8's `SET ROLE DEFAULT` becomes
 *   MariaDB's `SET ROLE NONE`.
 *
 * Packets are rewritten whole (their length fixed); a packet of 16 MiB or more passes untouched.
 */
import net from "node:net";
import { type ListenAddress, startTrackedServer, type TrackedServer } from "./tracked-server.js";

/** What Aurora MySQL 3.08 answers to @@version (MySQL 8.0.39 compatible). */
export const AURORA_MYSQL_SERVER_VERSION = "8.0.39";
export const AURORA_STANDIN_DATABASE = "aurora_standin";

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
const MAX_PAYLOAD = 0xffffff;

export interface AuroraWireOptions {
  /** The instance's Aurora server id. */
  serverId: string;
  /** What aurora_version() answers. */
  version: string;
}

/** The statement text as the stand-in's MariaDB runs it. */
export function rewriteStatement(sql: string, options: AuroraWireOptions): string {
  const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;
  return sql
    .replace(/information_schema\s*\.\s*replica_host_status/gi, `${AURORA_STANDIN_DATABASE}.replica_host_status`)
    .replace(/@@aurora_server_id\b/gi, quoted(options.serverId))
    .replace(/\baurora_version\s*\(\s*\)/gi, quoted(options.version))
    .replace(/@@(global\.)?gtid_mode\b/gi, "'OFF'")
    .replace(/\bSET\s+ROLE\s+DEFAULT\b/gi, "SET ROLE NONE");
}

function packet(sequence: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUIntLE(payload.length, 0, 3);
  header[3] = sequence;
  return Buffer.concat([header, payload]);
}

/** Splits a byte stream into packets, handing each (or, when it is too large to rewrite, its bytes) to `emit`. */
class PacketReader {
  private pending = Buffer.alloc(0);
  private continuation = false;

  constructor(private readonly emit: (sequence: number, payload: Buffer | undefined, raw: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 4) {
      const length = this.pending.readUIntLE(0, 3);
      if (this.pending.length < 4 + length) return;
      const raw = this.pending.subarray(0, 4 + length);
      this.pending = this.pending.subarray(4 + length);
      const whole = !this.continuation && length < MAX_PAYLOAD;
      this.continuation = length === MAX_PAYLOAD;
      this.emit(raw[3] ?? 0, whole ? raw.subarray(4) : undefined, raw);
    }
  }
}

/** The server's greeting (protocol 10) with another version string. */
function greetingWithVersion(payload: Buffer): Buffer {
  if (payload[0] !== 0x0a) return payload;
  const end = payload.indexOf(0, 1);
  if (end < 0) return payload;
  return Buffer.concat([payload.subarray(0, 1), Buffer.from(AURORA_MYSQL_SERVER_VERSION), payload.subarray(end)]);
}

/** One instance's name: new connections go to its target, as the instance its id names. */
export interface AuroraWire extends TrackedServer {
  /** The id @@aurora_server_id answers on new connections. */
  readonly serverId: string;
  /**
   * New connections go to `targetPort` and answer `serverId` (default: the same id): a renamed
   * instance, or a DNS name that moved (connections already made keep theirs).
   */
  repoint(targetPort: number, serverId?: string): void;
}

/** Listens (default: on a free port of 127.0.0.1) and forwards to `targetPort`, rewriting as the header says. */
export async function startAuroraWire(targetPort: number, initial: AuroraWireOptions, address: ListenAddress = {}): Promise<AuroraWire> {
  let target = targetPort;
  let current = initial;
  const server = await startTrackedServer((client, track) => {
    const options = current;
    const upstream = net.connect(target, "127.0.0.1");
    track(upstream);
    let greeted = false;
    const fromServer = new PacketReader((sequence, payload, raw) => {
      if (!greeted && payload !== undefined) {
        greeted = true;
        client.write(packet(sequence, greetingWithVersion(payload)));
      } else client.write(raw);
    });
    const fromClient = new PacketReader((sequence, payload, raw) => {
      // Commands open an exchange (sequence 0); the login's packets never do.
      const command = sequence === 0 ? payload?.[0] : undefined;
      if (payload === undefined || (command !== COM_QUERY && command !== COM_STMT_PREPARE)) {
        upstream.write(raw);
        return;
      }
      const text = payload.subarray(1).toString("utf8");
      const rewritten = rewriteStatement(text, options);
      upstream.write(rewritten === text ? raw : packet(sequence, Buffer.concat([payload.subarray(0, 1), Buffer.from(rewritten, "utf8")])));
    });
    upstream.on("data", (chunk: Buffer) => fromServer.push(chunk));
    client.on("data", (chunk: Buffer) => fromClient.push(chunk));
    upstream.on("end", () => client.end());
    client.on("end", () => upstream.end());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }, address);
  return {
    port: server.port,
    get serverId() {
      return current.serverId;
    },
    repoint: (next, serverId = current.serverId) => {
      target = next;
      current = { ...current, serverId };
    },
    close: () => server.close(),
  };
}
