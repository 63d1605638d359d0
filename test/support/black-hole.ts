/** Simulates an unreachable-but-not-refusing host (a network black hole): accepts TCP, never answers. */
import { startTrackedServer, type TrackedServer } from "./tracked-server.js";

export type BlackHole = TrackedServer;

export function startBlackHole(): Promise<BlackHole> {
  return startTrackedServer((socket) => {
    socket.on("error", () => undefined);
  });
}
