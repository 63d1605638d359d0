/**
 * A Prisma 7 driver adapter (`SqlDriverAdapterFactory` of `@prisma/driver-adapter-utils`) over the
 * RDS Data API's own client, `@aws-sdk/client-rds-data`: the way an application on the Data API runs
 * Prisma. It does what data-api-client's Prisma adapter (v2.4.0, not on npm) does on the wire, so the
 * gateway is tested with the same calls: each query is one ExecuteStatement with its placeholders
 * rewritten to named parameters and its result metadata asked for; a transaction is BeginTransaction,
 * and, as its options say `usePhantomQuery: false`, Prisma itself sends COMMIT or ROLLBACK as SQL
 * through ExecuteStatement before the adapter calls CommitTransaction or RollbackTransaction.
 * Every statement sent is reported to `onStatement`, so a test can see that path was taken.
 */
import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  type ExecuteStatementCommandOutput,
  type Field,
  type RDSDataClient,
  RollbackTransactionCommand,
  type SqlParameter,
} from "@aws-sdk/client-rds-data";
import {
  type ArgType,
  type ColumnType,
  ColumnTypeEnum,
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from "@prisma/driver-adapter-utils";

export interface DataApiPrismaOptions {
  client: RDSDataClient;
  engine: "postgres" | "mysql";
  resourceArn: string;
  secretArn: string;
  database?: string;
  /** Told of every ExecuteStatement sent: its SQL and the transaction it ran in, if any. */
  onStatement?: (sql: string, transactionId: string | undefined) => void;
}

const ADAPTER_NAME = "poolgate-test-data-api";

export function dataApiPrismaAdapter(options: DataApiPrismaOptions): SqlDriverAdapterFactory {
  const provider = options.engine;
  return { provider, adapterName: ADAPTER_NAME, connect: () => Promise.resolve(new DataApiAdapter(options)) };
}

class DataApiQueryable {
  readonly provider: "postgres" | "mysql";
  readonly adapterName = ADAPTER_NAME;

  constructor(
    protected readonly settings: DataApiPrismaOptions,
    protected readonly transactionId?: string,
  ) {
    this.provider = settings.engine;
  }

  async queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    const output = await this.run(query);
    const columns = output.columnMetadata ?? [];
    const columnTypes = columns.map((column) => columnTypeOf(column.typeName ?? ""));
    const rows = (output.records ?? []).map((record) => record.map((field, i) => valueOf(field, columnTypes[i] ?? ColumnTypeEnum.Text)));
    const insertId = output.generatedFields?.[0]?.longValue;
    return { columnNames: columns.map((column) => column.label ?? column.name ?? ""), columnTypes, rows, ...(insertId === undefined ? {} : { lastInsertId: String(insertId) }) };
  }

  async executeRaw(query: SqlQuery): Promise<number> {
    return (await this.run(query)).numberOfRecordsUpdated ?? 0;
  }

  protected async run(query: SqlQuery): Promise<ExecuteStatementCommandOutput> {
    const sql = namedPlaceholders(query.sql, this.settings.engine);
    this.settings.onStatement?.(sql, this.transactionId);
    const parameters = query.args.map((arg, i) => parameterOf(`p${i + 1}`, arg, query.argTypes[i]));
    try {
      return await this.settings.client.send(
        new ExecuteStatementCommand({ ...this.target(), sql, parameters, includeResultMetadata: true, ...(this.transactionId ? { transactionId: this.transactionId } : {}) }),
      );
    } catch (err) {
      throw databaseError(err, this.settings.engine);
    }
  }

  protected target(): { resourceArn: string; secretArn: string; database?: string } {
    const { resourceArn, secretArn, database } = this.settings;
    return { resourceArn, secretArn, ...(database === undefined ? {} : { database }) };
  }
}

class DataApiTransaction extends DataApiQueryable implements Transaction {
  /** Prisma sends COMMIT and ROLLBACK as SQL itself, before commit() and rollback(). */
  readonly options = { usePhantomQuery: false };

  constructor(
    settings: DataApiPrismaOptions,
    private readonly id: string,
  ) {
    super(settings, id);
  }

  async commit(): Promise<void> {
    await this.settings.client.send(new CommitTransactionCommand({ ...this.target(), transactionId: this.id }));
  }

  async rollback(): Promise<void> {
    await this.settings.client.send(new RollbackTransactionCommand({ ...this.target(), transactionId: this.id }));
  }
}

class DataApiAdapter extends DataApiQueryable implements SqlDriverAdapter {
  async executeScript(script: string): Promise<void> {
    for (const sql of script.split(";").map((part) => part.trim())) {
      if (sql !== "") await this.run({ sql, args: [], argTypes: [] });
    }
  }

  async startTransaction(): Promise<Transaction> {
    const { transactionId } = await this.settings.client.send(new BeginTransactionCommand(this.target()));
    if (transactionId === undefined) throw new Error("BeginTransaction answered no transactionId");
    return new DataApiTransaction(this.settings, transactionId);
  }

  getConnectionInfo() {
    return { supportsRelationJoins: false, maxBindValues: 1000 };
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

/** `$1` (PostgreSQL) or `?` (MySQL) outside quotes -> `:p1`, the Data API's named placeholders. */
export function namedPlaceholders(sql: string, engine: "postgres" | "mysql"): string {
  let out = "";
  let count = 0;
  for (let i = 0; i < sql.length; i++) {
    const char = sql.charAt(i);
    if (char === "'" || char === '"' || (char === "`" && engine === "mysql")) {
      const end = closingQuote(sql, i, char, engine);
      out += sql.slice(i, end + 1);
      i = end;
    } else if (engine === "postgres" && char === "$" && /\d/.test(sql.charAt(i + 1))) {
      const digits = /^\d+/.exec(sql.slice(i + 1))?.[0] ?? "";
      out += `:p${digits}`;
      i += digits.length;
    } else if (engine === "mysql" && char === "?") {
      out += `:p${++count}`;
    } else {
      out += char;
    }
  }
  return out;
}

function closingQuote(sql: string, start: number, quote: string, engine: "postgres" | "mysql"): number {
  for (let i = start + 1; i < sql.length; i++) {
    if (engine === "mysql" && quote === "'" && sql.charAt(i) === "\\") i++;
    else if (sql.charAt(i) === quote) {
      if (sql.charAt(i + 1) !== quote) return i;
      i++;
    }
  }
  return sql.length - 1;
}

/** "2024-01-15T03:34:56.123Z" -> "2024-01-15 03:34:56.123", the Data API's TIMESTAMP text (UTC). */
const timestampText = (date: Date): string => date.toISOString().replace("T", " ").replace("Z", "");

/** An argument's text: strings as they are, numbers and booleans printed, anything else (a JSON value) as JSON. */
const textOf = (arg: unknown): string =>
  typeof arg === "string" ? arg : typeof arg === "number" || typeof arg === "bigint" || typeof arg === "boolean" ? String(arg) : JSON.stringify(arg);

function parameterOf(name: string, arg: unknown, type: ArgType | undefined): SqlParameter {
  if (arg === null || arg === undefined) return { name, value: { isNull: true } };
  const text = (typeHint?: SqlParameter["typeHint"]): SqlParameter => ({ name, value: { stringValue: textOf(arg) }, ...(typeHint ? { typeHint } : {}) });
  switch (type?.scalarType) {
    case "int":
    case "bigint":
      return { name, value: { longValue: Number(arg) } };
    case "float":
      return { name, value: { doubleValue: Number(arg) } };
    case "decimal":
      return text("DECIMAL");
    case "boolean":
      return { name, value: { booleanValue: arg === true || arg === "true" || arg === 1 } };
    case "json":
      return text("JSON");
    case "uuid":
      return text("UUID");
    case "bytes":
      return { name, value: { blobValue: typeof arg === "string" ? Buffer.from(arg, "base64") : (arg as Uint8Array) } };
    case "datetime": {
      const stamp = timestampText(arg instanceof Date ? arg : new Date(textOf(arg)));
      if (type.dbType?.toUpperCase() === "DATE") return { name, value: { stringValue: stamp.slice(0, 10) }, typeHint: "DATE" };
      if (type.dbType?.toUpperCase().startsWith("TIME") && !type.dbType.toUpperCase().startsWith("TIMESTAMP")) return { name, value: { stringValue: stamp.slice(11) }, typeHint: "TIME" };
      return { name, value: { stringValue: stamp }, typeHint: "TIMESTAMP" };
    }
    default:
      if (typeof arg === "number") return { name, value: Number.isInteger(arg) ? { longValue: arg } : { doubleValue: arg } };
      if (typeof arg === "boolean") return { name, value: { booleanValue: arg } };
      return text();
  }
}

/** Prisma's column type for a columnMetadata typeName (PostgreSQL's names, or MySQL's upper-case ones). */
function columnTypeOf(typeName: string): ColumnType {
  switch (typeName.toLowerCase().replace(/ unsigned$/, "")) {
    case "int2":
    case "int4":
    case "serial":
    case "smallserial":
    case "tinyint":
    case "smallint":
    case "mediumint":
    case "int":
    case "year":
      return ColumnTypeEnum.Int32;
    case "int8":
    case "bigserial":
    case "bigint":
      return ColumnTypeEnum.Int64;
    case "float4":
    case "float":
      return ColumnTypeEnum.Float;
    case "float8":
    case "double":
      return ColumnTypeEnum.Double;
    case "numeric":
    case "decimal":
      return ColumnTypeEnum.Numeric;
    case "bool":
    case "bit":
      return ColumnTypeEnum.Boolean;
    case "date":
      return ColumnTypeEnum.Date;
    case "time":
    case "timetz":
      return ColumnTypeEnum.Time;
    case "timestamp":
    case "timestamptz":
    case "datetime":
      return ColumnTypeEnum.DateTime;
    case "json":
    case "jsonb":
      return ColumnTypeEnum.Json;
    case "bytea":
    case "blob":
    case "binary":
    case "varbinary":
      return ColumnTypeEnum.Bytes;
    case "uuid":
      return ColumnTypeEnum.Uuid;
    default:
      return ColumnTypeEnum.Text;
  }
}

/** A Field as the value Prisma reads for its column type. */
function valueOf(field: Field, type: ColumnType): unknown {
  if (field.isNull) return null;
  if (field.longValue !== undefined) return type === ColumnTypeEnum.Int64 ? String(field.longValue) : field.longValue;
  if (field.booleanValue !== undefined) return field.booleanValue;
  if (field.doubleValue !== undefined) return field.doubleValue;
  if (field.blobValue !== undefined) return field.blobValue;
  if (field.stringValue !== undefined) {
    // The Data API writes timestamps in UTC without an offset: "2024-01-15 03:34:56.123".
    return type === ColumnTypeEnum.DateTime ? `${field.stringValue.replace(" ", "T")}+00:00` : field.stringValue;
  }
  throw new Error(`a Field this adapter does not read: ${JSON.stringify(field)}`);
}

/**
 * A DatabaseErrorException as Prisma's error for the engine: the SQLSTATE (PostgreSQL) or error code
 * (MySQL) read from the service's message ("...; SQLState: 23505", "...; Error code: 1062; SQLState: 23000").
 */
function databaseError(err: unknown, engine: "postgres" | "mysql"): unknown {
  if (!(err instanceof Error) || err.name !== "DatabaseErrorException") return err;
  const state = /SQLState: (\w+)/.exec(err.message)?.[1] ?? "";
  if (engine === "postgres") {
    return new DriverAdapterError({ kind: "postgres", code: state, severity: "ERROR", message: err.message, detail: undefined, column: undefined, hint: undefined });
  }
  const code = Number(/Error code: (\d+)/.exec(err.message)?.[1] ?? 0);
  return new DriverAdapterError({ kind: "mysql", code, message: err.message, state });
}
