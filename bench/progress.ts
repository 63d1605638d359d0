/**
 * The progress bar on stderr. The run is planned as steps with an estimated duration each; the bar
 * advances by those estimates (inside a step, by the time spent, never past the step's end) and the
 * time left is the estimate still to go, scaled by how fast the finished steps went against theirs.
 * On a terminal it redraws one line; otherwise (CI, a pipe) it prints a line per step.
 * Written here rather than taken from cli-progress: this is all the bar the bench needs, and the
 * bench stays free of a dependency (and of package.json churn) for it.
 */
const REDRAW_MS = 200;

export class Progress {
  private plannedS = 0;
  private creditedS = 0;
  private phase = "";
  private label = "";
  private stepEstimateS = 0;
  private stepStartedAt = 0;
  private readonly startedAt = performance.now();
  private finishedStepsActualS = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly tty: boolean;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {
    this.tty = out.isTTY;
  }

  /** Adds estimated seconds of work to the plan. */
  plan(seconds: number): void {
    this.plannedS += seconds;
  }

  setPhase(phase: string): void {
    this.phase = phase;
  }

  /** Runs one step of the plan under `label`, crediting its estimate when it ends (even if it throws). */
  async step<T>(label: string, estimateS: number, work: () => Promise<T>): Promise<T> {
    this.label = label;
    this.stepEstimateS = estimateS;
    this.stepStartedAt = performance.now();
    if (this.tty) {
      this.timer ??= setInterval(() => this.draw(), REDRAW_MS).unref();
      this.draw();
    } else {
      this.out.write(`[${this.percent().padStart(4)}] ${this.describe()}\n`);
    }
    try {
      return await work();
    } finally {
      this.creditedS += estimateS;
      this.finishedStepsActualS += (performance.now() - this.stepStartedAt) / 1000;
      this.stepEstimateS = 0;
    }
  }

  /** Clears the bar and stops redrawing; the terminal line is left empty for what follows. */
  finish(message?: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) this.out.write("\r\x1b[2K");
    if (message) this.out.write(`${message}\n`);
  }

  private fraction(): number {
    const inStep = Math.min((performance.now() - this.stepStartedAt) / 1000, this.stepEstimateS * 0.95);
    return this.plannedS === 0 ? 0 : Math.min(1, (this.creditedS + Math.max(0, inStep)) / this.plannedS);
  }

  private percent(): string {
    return `${Math.floor(this.fraction() * 100)}%`;
  }

  private describe(): string {
    return [this.phase, this.label].filter(Boolean).join(" · ");
  }

  private draw(): void {
    const elapsedS = (performance.now() - this.startedAt) / 1000;
    // How fast steps go against their estimates, starting from "as estimated" so one odd step cannot swing it.
    const prior = Math.min(30, this.plannedS / 4);
    const pace = (this.finishedStepsActualS + prior) / (this.creditedS + prior);
    const leftS = Math.max(0, (1 - this.fraction()) * this.plannedS * pace);
    const columns = this.out.columns || 100;
    const barWidth = Math.max(10, Math.min(30, columns - 70));
    const filled = Math.round(this.fraction() * barWidth);
    const head = `${"█".repeat(filled)}${"░".repeat(barWidth - filled)} ${this.percent().padStart(4)} ${clock(elapsedS)} ~${clock(leftS)} left `;
    const line = `${head}${this.describe()}`.slice(0, columns - 1);
    this.out.write(`\r\x1b[2K${line}`);
  }
}

function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
