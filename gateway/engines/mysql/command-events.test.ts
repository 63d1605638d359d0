import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type CommandReceiver, deliverEvents } from "./command-events.js";
import type { MysqlField } from "./values.js";

/** Records what it is told, in order. */
class RecordingReceiver implements CommandReceiver {
  readonly heard: unknown[][] = [];
  onCommandFields(fields: MysqlField[] | undefined): void {
    this.heard.push(["fields", fields]);
  }
  onCommandRow(row: unknown): void {
    this.heard.push(["row", row]);
  }
  onCommandError(err: Error): void {
    this.heard.push(["error", err.message]);
  }
  onCommandEnd(): void {
    this.heard.push(["end"]);
  }
}

describe("a mysql2 command's events delivered to a receiver", () => {
  it("tells the receiver each event in order, and registers no listener on the command", () => {
    const command = new EventEmitter();
    const receiver = new RecordingReceiver();
    deliverEvents(command, receiver);
    const fields = [{ name: "g" }] as unknown as MysqlField[];
    command.emit("fields", fields, 0);
    command.emit("result", [1], 0);
    command.emit("result", [2], 0);
    command.emit("end");
    expect(receiver.heard).toEqual([["fields", fields], ["row", [1]], ["row", [2]], ["end"]]);
    expect(command.eventNames()).toEqual([]);
  });

  it("takes an error with no listener on the command without throwing, as a listener would", () => {
    const command = new EventEmitter();
    const receiver = new RecordingReceiver();
    deliverEvents(command, receiver);
    expect(command.emit("error", new Error("refused"))).toBe(true);
    command.emit("end");
    expect(receiver.heard).toEqual([["error", "refused"], ["end"]]);
  });

  it("still calls listeners others add (mysql2's tracing), after the receiver and with the event's arguments", () => {
    const command = new EventEmitter();
    const order: string[] = [];
    const receiver: CommandReceiver = {
      onCommandFields: () => order.push("receiver fields"),
      onCommandRow: () => order.push("receiver row"),
      onCommandError: () => order.push("receiver error"),
      onCommandEnd: () => order.push("receiver end"),
    };
    deliverEvents(command, receiver);
    command.once("error", (err: Error) => order.push(`listener error ${err.message}`));
    command.once("end", () => order.push("listener end"));
    command.on("result", (row: unknown, index: unknown) => order.push(`listener row ${JSON.stringify(row)} ${String(index)}`));
    command.emit("result", [7], 0);
    command.emit("error", new Error("boom"));
    command.emit("end");
    command.emit("end");
    expect(order).toEqual(["receiver row", "listener row [7] 0", "receiver error", "listener error boom", "receiver end", "listener end", "receiver end"]);
  });
});
