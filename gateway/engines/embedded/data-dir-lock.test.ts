import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_FILE, lockDataDir } from "./data-dir-lock.js";

describe("the embedded data directory's lock", () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "poolgate-lock-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a second holder in the same process until the first lets go, and then removes its file", () => {
    const dir = newDir();
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(process.pid));
    expect(() => lockDataDir(dir)).toThrow(/in use by process \d+ .*POOLGATE_DATA_DIR/);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir).release();
  });

  it("refuses a directory whose lock names a live process of another program, and leaves that lock alone", () => {
    const dir = newDir();
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    children.push(holder);
    writeFileSync(join(dir, LOCK_FILE), `${holder.pid}\n`);
    expect(() => lockDataDir(dir)).toThrow(`in use by process ${holder.pid}`);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(holder.pid));
  });

  it("is held while any process it lists lives (the PGlite server outliving its gateway)", () => {
    const dir = newDir();
    const server = spawn("sleep", ["30"], { stdio: "ignore" });
    children.push(server);
    const gone = spawnSync("true").pid;
    writeFileSync(join(dir, LOCK_FILE), `${gone}\n${server.pid}\n`);
    expect(() => lockDataDir(dir)).toThrow(`in use by process ${server.pid}`);
  });

  it("takes over a lock left by processes that are gone (a crash), and one naming its own pid from an earlier run (a restarted container)", () => {
    const dir = newDir();
    const gone = spawnSync("true").pid;
    writeFileSync(join(dir, LOCK_FILE), `${gone}\n`);
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(process.pid));
    lock.release();

    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    const again = lockDataDir(dir);
    again.addProcess(gone);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim().split("\n")).toEqual([String(process.pid), String(gone)]);
    again.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("lets exactly one of several processes starting at once have it, over a fresh directory and over a stale lock", async () => {
    const module = fileURLToPath(new URL("./data-dir-lock.ts", import.meta.url));
    // Each contender waits for the same instant, tries, and says how it went; the one that got the lock
    // holds it until told to let go (its stdin closes), once every other contender has answered.
    const contender = (dir: string, at: number) => {
      const script =
        `const { lockDataDir } = await import(${JSON.stringify(module)}); while (Date.now() < ${at}); ` +
        `try { const lock = lockDataDir(${JSON.stringify(dir)}); console.log("locked"); process.stdin.on("end", () => lock.release()).resume(); } ` +
        `catch (err) { console.log(String(err.message).includes("in use") ? "refused" : "error " + err.message); }`;
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
      children.push(child);
      let output = "";
      const answered = new Promise<string>((resolve) => {
        child.stdout.on("data", (data: Buffer) => {
          output += data.toString();
          if (output.includes("\n")) resolve(output.trim());
        });
        child.once("close", (code) => resolve(output.trim() || `failed with code ${code}`));
      });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      return { answered, letGo: () => child.stdin.end(), exited };
    };
    for (const stale of [false, true]) {
      const dir = newDir();
      if (stale) writeFileSync(join(dir, LOCK_FILE), `${spawnSync("true").pid}\n`);
      const at = Date.now() + 4000;
      const contenders = Array.from({ length: 6 }, () => contender(dir, at));
      const outcomes = await Promise.all(contenders.map(({ answered }) => answered));
      for (const { letGo } of contenders) letGo();
      await Promise.all(contenders.map(({ exited }) => exited));
      expect(outcomes.filter((outcome) => outcome === "locked"), `stale: ${stale}; ${outcomes.join(", ")}`).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === "refused"), `stale: ${stale}; ${outcomes.join(", ")}`).toHaveLength(5);
    }
  }, 30000);
});
