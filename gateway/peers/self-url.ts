/** This task's URL as its peers reach it: the listen address, or its private IPv4 when it listens on all. */
import { networkInterfaces } from "node:os";

export function selfUrl(host: string, port: number): string {
  if (host !== "0.0.0.0" && host !== "::") return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  for (const addresses of Object.values(networkInterfaces())) {
    const address = addresses?.find((candidate) => candidate.family === "IPv4" && !candidate.internal);
    if (address) return `http://${address.address}:${port}`;
  }
  return `http://127.0.0.1:${port}`;
}
