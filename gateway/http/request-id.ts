/**
 * Request ids for answers and logs, shaped as UUIDs (the Data API's callers read x-amzn-RequestId as
 * one): 19 random hex digits chosen once per process, then a 48-bit count. Unique across the tasks of a
 * service in practice, and far cheaper per request than a random UUID each. They name requests; they
 * are not secrets and nothing is authorised by them.
 */
import { randomBytes } from "node:crypto";

/** 19 random hex digits, for the fixed part: xxxxxxxx-xxxx-4xxx-Vxxx- (version 4; V carries variant bits 10). */
const random = randomBytes(10).toString("hex");
const variant = ((Number.parseInt(random.slice(15, 16), 16) & 0x3) | 0x8).toString(16);
const prefix = `${random.slice(0, 8)}-${random.slice(8, 12)}-4${random.slice(12, 15)}-${variant}${random.slice(16, 19)}-`;
const COUNT_DIGITS = 12;
let count = 0;

export function nextRequestId(): string {
  // 2^48 requests before it wraps: decades at any rate one process serves.
  count = count === 0xffffffffffff ? 1 : count + 1;
  return prefix + count.toString(16).padStart(COUNT_DIGITS, "0");
}
