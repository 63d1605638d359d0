/**
 * Extended-protocol messages whose bytes never change, framed once: a parameterless statement's
 * Parse under a fixed name, its Bind and Execute through the unnamed portal, and Sync. The hot path
 * writes them as they are instead of serialising the same few bytes on every statement.
 */

function frame(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const cString = (text: string) => Buffer.from(`${text}\0`, "utf8");
const int16 = (value: number) => {
  const bytes = Buffer.alloc(2);
  bytes.writeInt16BE(value);
  return bytes;
};

/** Close of the prepared statement `name` (closing one that does not exist is not an error). */
export function closeStatementFrame(name: string): Buffer {
  return frame("C", Buffer.concat([Buffer.from("S", "latin1"), cString(name)]));
}

/** Parse: the statement `name` for `text`, with no parameter types. */
export function parseFrame(name: string, text: string): Buffer {
  return frame("P", Buffer.concat([cString(name), cString(text), int16(0)]));
}

/** Bind of the parameterless statement `name` to the unnamed portal (results as text), then Execute it to its end. */
export function bindAndExecuteFrame(name: string): Buffer {
  const bind = frame("B", Buffer.concat([cString(""), cString(name), int16(0), int16(0), int16(1), int16(0)]));
  const execute = frame("E", Buffer.concat([cString(""), Buffer.from([0, 0, 0, 0])]));
  return Buffer.concat([bind, execute]);
}

export const SYNC_FRAME = frame("S", Buffer.alloc(0));
