/**
 * Interactive transactions live in the gateway task that began them. Behind a load balancer a caller's
 * next call may reach another task; with a peer key shared by the tasks, a transaction id names its
 * owner (the task's own URL, signed with the key), so any task can send the call on to the owner.
 * Only ids this service minted are forwarded, and only to the address they carry: a forged or altered
 * id is simply unknown.
 *
 * Id: "<uuid>~<owner URL, base64url>~<HMAC-SHA256(key, uuid~owner), base64url, 22 chars>".
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";

const SEPARATOR = "~";

export class TransactionOwnership {
  private selfUrl: string | undefined;

  constructor(private readonly key: Buffer) {}

  /** This task's URL as its peers reach it (known once the server listens). */
  setSelf(url: string): void {
    this.selfUrl = url.replace(/\/+$/, "");
  }

  private sign(uuid: string, owner: string): string {
    return createHmac("sha256", this.key).update(`${uuid}${SEPARATOR}${owner}`).digest("base64url").slice(0, 22);
  }

  /** A new transaction id naming this task as its owner (a plain UUID until the address is known). */
  mint(): string {
    const uuid = randomUUID();
    if (this.selfUrl === undefined) return uuid;
    return [uuid, Buffer.from(this.selfUrl).toString("base64url"), this.sign(uuid, this.selfUrl)].join(SEPARATOR);
  }

  /** The URL of the task that owns the id, when it is another task and the id is genuine. */
  foreignOwner(id: string): string | undefined {
    const parts = id.split(SEPARATOR);
    if (parts.length !== 3) return undefined;
    const [uuid, encodedOwner, signature] = parts as [string, string, string];
    const owner = Buffer.from(encodedOwner, "base64url").toString("utf8");
    const expected = Buffer.from(this.sign(uuid, owner));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (!/^https?:\/\/[^/]+$/.test(owner) || owner === this.selfUrl) return undefined;
    return owner;
  }
}
