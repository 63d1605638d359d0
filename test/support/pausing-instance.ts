/**
 * Stands in for an Aurora Serverless v2 instance that may pause (minimum capacity 0 ACUs), in front of
 * a real server: after `pauseAfterMs` with no connection open it "pauses"; the next connection attempt
 * starts a resume that takes `resumeMs`, then the instance serves as before. What a connection attempt
 * meets meanwhile is the switch `whilePaused`:
 * - "hold" (AWS: "any requested connections are established after the DB instance finishes resuming",
 *   docs/aurora.md#serverless-v2-auto-pause): the attempt is accepted and answered once resumed;
 * - "refuse" (not settled by AWS's documentation, kept so the gateway is proven both ways): the
 *   attempt is closed at once, and the caller must try again.
 * Every TCP connection counts as activity, as Aurora counts user connections; the monitor's sessions
 * too, which is why the gateway must release them all for the instance to pause.
 */
import net from "node:net";
import { startTrackedServer } from "./tracked-server.js";

export type PausedConnectBehaviour = "hold" | "refuse";
export type PausingState = "available" | "paused" | "resuming";

export interface PausingInstanceOptions {
  /** The real server behind it. */
  targetPort: number;
  /** Idle time with no connection before it pauses (Aurora: SecondsUntilAutoPause, 300 s at least). */
  pauseAfterMs: number;
  /** How long a resume takes (Aurora: about 15 s; 30 s or more after a day paused). */
  resumeMs: number;
  whilePaused?: PausedConnectBehaviour;
}

export interface PausingInstance {
  port: number;
  readonly state: PausingState;
  /** Connections open now (held ones included). */
  readonly open: number;
  readonly pauses: number;
  readonly resumes: number;
  /** Attempts held while paused or resuming, and attempts refused. */
  readonly held: number;
  readonly refused: number;
  /** `url` with this stand-in's host and port: the instance's endpoint. */
  endpointUrl(url: string): string;
  close(): Promise<void>;
}

export async function startPausingInstance(options: PausingInstanceOptions): Promise<PausingInstance> {
  const whilePaused = options.whilePaused ?? "hold";
  let state: PausingState = "available";
  let open = 0;
  let pauses = 0;
  let resumes = 0;
  let held = 0;
  let refused = 0;
  let pauseTimer: NodeJS.Timeout | undefined;
  let resumeTimer: NodeJS.Timeout | undefined;
  const waiting: { client: net.Socket; track: (socket: net.Socket) => void }[] = [];

  const armPause = () => {
    clearTimeout(pauseTimer);
    pauseTimer = setTimeout(() => {
      if (open === 0 && state === "available") {
        state = "paused";
        pauses++;
      }
    }, options.pauseAfterMs);
  };

  const closed = () => {
    open--;
    if (open === 0) armPause();
  };

  const serve = (client: net.Socket, track: (socket: net.Socket) => void) => {
    if (client.destroyed) return;
    const upstream = net.connect(options.targetPort, "127.0.0.1");
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  };

  const beginResume = () => {
    state = "resuming";
    resumeTimer = setTimeout(() => {
      state = "available";
      resumes++;
      for (const { client, track } of waiting.splice(0)) serve(client, track);
      if (open === 0) armPause();
    }, options.resumeMs);
  };

  const server = await startTrackedServer((client, track) => {
    if (state === "paused") beginResume();
    if (state !== "available" && whilePaused === "refuse") {
      refused++;
      client.destroy();
      return;
    }
    open++;
    clearTimeout(pauseTimer);
    client.once("close", closed);
    client.on("error", () => undefined);
    if (state === "available") serve(client, track);
    else {
      // Bytes the client sends meanwhile stay buffered on its socket until it is piped.
      held++;
      waiting.push({ client, track });
    }
  });
  armPause();

  return {
    port: server.port,
    get state() {
      return state;
    },
    get open() {
      return open;
    },
    get pauses() {
      return pauses;
    },
    get resumes() {
      return resumes;
    },
    get held() {
      return held;
    },
    get refused() {
      return refused;
    },
    endpointUrl(url: string) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(server.port);
      return parsed.toString();
    },
    close: async () => {
      clearTimeout(pauseTimer);
      clearTimeout(resumeTimer);
      await server.close();
    },
  };
}
