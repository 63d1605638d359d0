import { describe, expect, it } from "vitest";
import { TransactionOwnership } from "./transaction-ownership.js";

const key = Buffer.from("a shared peer key of at least thirty-two bytes");

describe("transaction ownership", () => {
  it("names the owner in the id, and only another task sees it as foreign", () => {
    const a = new TransactionOwnership(key);
    const b = new TransactionOwnership(key);
    a.setSelf("http://10.0.1.5:8080");
    b.setSelf("http://10.0.2.7:8080/");
    const id = a.mint();
    expect(id.length).toBeLessThanOrEqual(192);
    expect(a.foreignOwner(id)).toBeUndefined();
    expect(b.foreignOwner(id)).toBe("http://10.0.1.5:8080");
  });

  it("never forwards a forged, altered or differently keyed id", () => {
    const a = new TransactionOwnership(key);
    a.setSelf("http://10.0.1.5:8080");
    const b = new TransactionOwnership(key);
    b.setSelf("http://10.0.2.7:8080");
    const [uuid, , signature] = a.mint().split("~") as [string, string, string];
    const retargeted = [uuid, Buffer.from("http://169.254.169.254").toString("base64url"), signature].join("~");
    expect(b.foreignOwner(retargeted)).toBeUndefined();
    const otherKey = new TransactionOwnership(Buffer.from("another key, of at least thirty-two bytes"));
    otherKey.setSelf("http://10.0.9.9:8080");
    expect(b.foreignOwner(otherKey.mint())).toBeUndefined();
    expect(b.foreignOwner("plain-uuid")).toBeUndefined();
    expect(b.foreignOwner("a~b~c~d")).toBeUndefined();
  });
});
