/** The engine a cluster's URL scheme names: postgres:// and postgresql:// -> pg, mysql:// -> mysql2. */
import { engineOfUrl } from "../config/schema.js";
import type { DatabaseAccess } from "../credentials/database-access.js";
import type { Engine } from "./engine.js";
import { MysqlEngine } from "./mysql/engine.js";
import { PostgresEngine } from "./postgres/engine.js";

export interface EngineSettings extends DatabaseAccess {
  /** Prepared statements cached per connection. */
  preparedCacheSize: number;
  /** After a cancel (CancelRequest, KILL QUERY), how long to wait for the server before cutting the socket. */
  cancelGraceMs: number;
  /** More functions (routing.writingFunctions) whose SELECTs must run on the primary. */
  writingFunctions: readonly string[];
}

export function engineForUrl(url: string, settings: EngineSettings): Engine {
  const kind = engineOfUrl(url);
  if (kind === "mysql") return new MysqlEngine(settings);
  if (kind === "postgres") return new PostgresEngine(settings);
  throw new Error("the database URL names no supported engine (postgres:// or mysql://)");
}
