/**
 * Wire types of PlanetScale's HTTP protocol as `@planetscale/database` speaks it:
 * `POST /psdb.v1alpha1.Database/Execute` with `{query, session}` (the SQL already holds its values:
 * the driver formats them into the text) and `POST /psdb.v1alpha1.Database/CreateSession`. The
 * answer is `{session, result, error?, timing}`; the driver carries `session` from one answer to its
 * next request on the same connection, unread. Poolgate's session names the cluster, the open
 * transaction and the last write's consistency token.
 */
import { z } from "zod";

export const planetscaleSessionSchema = z.strictObject({
  poolgate: z.literal(1).describe("Marks a session this gateway issued"),
  cluster: z.string().min(1).describe("The cluster the session's work runs on"),
  transactionId: z.string().min(1).optional().describe("The interactive transaction BEGIN opened, until COMMIT or ROLLBACK"),
  consistencyToken: z.string().min(1).optional().describe("The session's last write's token: its later reads run where that write is visible"),
});
export type PlanetscaleSession = z.infer<typeof planetscaleSessionSchema>;

export const planetscaleExecuteSchema = z.object({
  query: z.string().min(1).describe("One SQL statement, values already in the text"),
  session: planetscaleSessionSchema.nullable().optional().describe("The session of the connection's previous answer, or null"),
});
export type PlanetscaleExecute = z.infer<typeof planetscaleExecuteSchema>;

/** A result column as Vitess's query.Field names it (protojson: zero values left out). */
export interface PlanetscaleField {
  name: string;
  /** Vitess's type name (INT64, UINT8, DECIMAL, VARCHAR, BLOB, JSON...); absent for NULL. */
  type?: string;
  table?: string;
  orgTable?: string;
  database?: string;
  orgName?: string;
  columnLength?: number;
  charset?: number;
  decimals?: number;
  flags?: number;
}

/** The error the driver turns into its DatabaseError: a Vitess code name and MySQL's message with `(errno N) (sqlstate S)`. */
export interface PlanetscaleError {
  message: string;
  code: string;
  /** The Poolgate registry code (the driver keeps the object as `DatabaseError.body`). */
  poolgateCode: string;
}
