/**
 * A mysql2 command's events (fields, result, error, end), delivered to one receiver without
 * registering listeners. mysql2's commands are EventEmitters, and Node keeps an emitter's listeners in
 * a dictionary-mode object: four `on` calls per statement were four slow-path property additions plus
 * four closures, on every request (the bench's instruction ledger: about 1,750 instructions of each
 * MySQL point select, where the naive forwarder, which passes mysql2 a callback, pays none). A
 * callback would make mysql2 buffer the whole result before the gateway sees it, so the rows could not
 * be bounded as they stream in; instead the command's own `emit` is pointed at the receiver.
 *
 * Listeners that someone else adds still hear every event: mysql2 adds its own (`once('error')`,
 * `once('end')`) when a diagnostics channel has subscribers (its tracing), and they are called after
 * the receiver, with the event's arguments.
 */
import { EventEmitter } from "node:events";
import type { MysqlField } from "./values.js";

/** What mysql2's query and execute commands are in event mode (no callback). */
export type Mysql2Command = EventEmitter;

/** One statement's events, in mysql2's order: fields and rows (an OK packet comes as a result), then error or end. */
export interface CommandReceiver {
  /** A result set's description (undefined for a LOAD DATA LOCAL reply). */
  onCommandFields(fields: MysqlField[] | undefined): void;
  /** A row (an array), or the OK packet of a statement without a result set. */
  onCommandRow(row: unknown): void;
  /** The statement failed; `end` follows. */
  onCommandError(err: Error): void;
  onCommandEnd(): void;
}

const RECEIVER = Symbol("poolgate.commandReceiver");

interface Delivering extends EventEmitter {
  [RECEIVER]: CommandReceiver;
}

/** The command's `emit`: mysql2 emits at most two arguments (a row or fields, and the result set's index). */
function deliver(this: Delivering, event: string | symbol, first?: unknown, second?: unknown): boolean {
  const receiver = this[RECEIVER];
  if (event === "result") receiver.onCommandRow(first);
  else if (event === "fields") receiver.onCommandFields(first as MysqlField[] | undefined);
  else if (event === "end") receiver.onCommandEnd();
  else if (event === "error") receiver.onCommandError(first as Error);
  // An 'error' with no listener would throw from EventEmitter's emit: only listeners present are called.
  if (this.listenerCount(event) > 0) EventEmitter.prototype.emit.call(this, event, first, second);
  return true;
}

/** Points `command`'s events at `receiver`, from its next emit on (mysql2 emits nothing before the server answers). */
export function deliverEvents(command: Mysql2Command, receiver: CommandReceiver): void {
  const delivering = command as Delivering;
  delivering[RECEIVER] = receiver;
  delivering.emit = deliver;
}
