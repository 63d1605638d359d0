/**
 * An autocommit write and its consistency token in one round trip: BEGIN, the statement, COMMIT and
 * the primary's WAL insert position, pipelined in the extended protocol before a single Sync.
 *
 * The position is read after COMMIT has completed on this session, so it is at or past the write's
 * commit record, exactly as a separate read afterwards would be (read inside the statement's own
 * implicit transaction it would be too early: that commits only at Sync). The explicit block is why
 * connection.ts sends only statements that run the same inside one (a single plain query or DML),
 * on a session outside any transaction, as a named prepared statement. The statement's Parse goes
 * first, so that pg's record of parsed statements (set on every ParseComplete of the active query)
 * can only count it parsed once it has been.
 *
 * BEGIN, COMMIT and the position read are prepared once per session under fixed names (counted
 * parsed only once BEGIN has run, which their Parses precede; until then each write closes and
 * parses them again, which cannot fail; DISCARD ALL forgets them with the rest)
 * and framed once by pg's own serialiser (pg-protocol): per write, the server parses nothing and the
 * gateway serialises only the statement's own Bind.
 *
 * How it can end: an error in the statement leaves the block aborted (`transactionLeftOpen`: the
 * connection rolls it back); an error at COMMIT ends the block rolled back; an error reading the
 * position comes after the commit, so the write stands and only its position is missing (null).
 */
import { serialize } from "pg-protocol";
import type { ResultLimits } from "../result-budget.js";
import { type FieldDescription, type PreparedStatement, StatementQuery, type WireConnection } from "./statement-query.js";
import type { Parser } from "./values.js";
import { AURORA_COMMIT_POSITION_SQL, type PositionSource } from "./aurora-time-position.js";

/** What the gateway reads after a write for its consistency token, by where positions come from (aurora-time-position.ts). */
export const COMMIT_POSITION_SQL: Record<PositionSource, string> = {
  wal: "SELECT pg_current_wal_insert_lsn()::text",
  "aurora-clock": AURORA_COMMIT_POSITION_SQL,
};

/** The fixed statements and their frames, per position source (prepared under names of their own). */
function fixedStatements(source: PositionSource) {
  const suffix = source === "wal" ? "" : "_aurora";
  const fixed = {
    begin: [`poolgate_begin${suffix}`, "BEGIN"],
    commit: [`poolgate_commit${suffix}`, "COMMIT"],
    position: [`poolgate_commit_position${suffix}`, COMMIT_POSITION_SQL[source]],
  } as const;
  return {
    fixed,
    /** Closed first: a session that failed between these Parses and BEGIN has them without our record of it (closing a missing statement is no error). */
    parse: Buffer.concat(Object.values(fixed).flatMap(([name, text]) => [serialize.close({ type: "S", name }), serialize.parse({ name, text })])),
    runBegin: Buffer.concat(runFixed(fixed.begin[0])),
    runCommitAndPosition: Buffer.concat([...runFixed(fixed.commit[0]), ...runFixed(fixed.position[0]), serialize.sync()]),
  };
}

/** Bind of a parameterless prepared statement to the unnamed portal, and Execute to its end (pg's own serialiser, once). */
const runFixed = (name: string) => [serialize.bind({ statement: name, portal: "", values: [], binary: false }), serialize.execute({ portal: "", rows: 0 })];
const FIXED_BY_SOURCE: Record<PositionSource, ReturnType<typeof fixedStatements>> = { wal: fixedStatements("wal"), "aurora-clock": fixedStatements("aurora-clock") };

/** Which part's answers the server is sending: each CommandComplete moves to the next. */
type Phase = "begin" | "statement" | "commit" | "position" | "done";
const NEXT: Record<Phase, Phase> = { begin: "statement", statement: "commit", commit: "position", position: "done", done: "done" };

export class CommittedWriteQuery extends StatementQuery {
  /** The WAL insert position after COMMIT; null when the write committed but the position could not be read. */
  position: string | null = null;
  /** The statement failed inside the block: the session is in an aborted transaction until ROLLBACK. */
  transactionLeftOpen = false;
  private phase: Phase = "begin";

  constructor(
    text: string,
    values: unknown[],
    prepared: PreparedStatement,
    parsersFor: (fields: FieldDescription[]) => Parser[],
    parserKey: string,
    limits: ResultLimits,
    private readonly source: PositionSource = "wal",
  ) {
    super(text, values, prepared, parsersFor, parserKey, limits, () => undefined);
  }

  override submit(connection: WireConnection): null {
    const parsed = this.parsedOn(connection);
    const stream = connection.stream;
    stream.cork?.();
    try {
      if (!parsed) this.sendParse(connection);
      const fixed = FIXED_BY_SOURCE[this.source];
      if (connection.parsedStatements[fixed.fixed.begin[0]] === undefined) stream.write(fixed.parse);
      stream.write(fixed.runBegin);
      this.sendExecute(connection, parsed);
      stream.write(fixed.runCommitAndPosition);
    } finally {
      stream.uncork?.();
    }
    return null;
  }

  override handleRowDescription(message: { fields: FieldDescription[] }): void {
    if (this.phase === "statement") super.handleRowDescription(message);
  }

  override handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.phase === "statement") super.handleDataRow(message);
    else if (this.phase === "position") this.position = message.fields[0] ?? null;
  }

  override handleCommandComplete(message: { text: string }, connection?: WireConnection): void {
    if (this.phase === "begin" && connection !== undefined) {
      // BEGIN ran, so the Parses before it did: the fixed statements exist on this session.
      for (const [name, text] of Object.values(FIXED_BY_SOURCE[this.source].fixed)) connection.parsedStatements[name] = text;
    }
    if (this.phase === "statement") super.handleCommandComplete(message);
    this.phase = NEXT[this.phase];
  }

  override handleError(err: Error): void {
    if (this.phase === "position") {
      // COMMIT has completed: the write stands; only its position is unknown.
      this.position = null;
      this.finish(this.rowError);
      return;
    }
    this.transactionLeftOpen = this.phase === "statement";
    super.handleError(err);
  }
}

/**
 * COMMIT of the session's open transaction and the position after it, as one simple-protocol string
 * (PostgreSQL commits a transaction statement in a string of several before running the next). How the
 * transaction ended is COMMIT's own tag: "ROLLBACK" when it had failed (the position is then no token).
 */
export class CommitQuery extends StatementQuery {
  ended: "committed" | "rolled back" = "committed";
  position: string | null = null;
  private answered = 0;

  constructor(source: PositionSource = "wal") {
    super(`COMMIT; ${COMMIT_POSITION_SQL[source]}`, undefined, undefined, () => [], "string", { maxBytes: 1024, maxRows: 1 }, () => undefined);
  }

  override handleRowDescription(): void {}

  override handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.answered === 1) this.position = message.fields[0] ?? null;
  }

  override handleCommandComplete(message: { text: string }): void {
    if (this.answered === 0) this.ended = message.text === "ROLLBACK" ? "rolled back" : "committed";
    this.answered++;
  }

  override handleError(err: Error): void {
    // After COMMIT's answer the transaction has ended as it said; only the position read failed.
    if (this.answered >= 1) {
      this.position = null;
      this.finish(null);
      return;
    }
    super.handleError(err);
  }
}
