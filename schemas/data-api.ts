/**
 * Wire types of the RDS Data API surface (`POST /Execute`, `/BatchExecute`, `/BeginTransaction`,
 * `/CommitTransaction`, `/RollbackTransaction`, `/ExecuteSql`), as `@aws-sdk/client-rds-data` sends and
 * parses them (restJson1). Unknown request members are ignored, as the service does.
 */
import { z } from "zod";

/** A value: a union with exactly one member. */
export interface DataApiField {
  isNull?: boolean;
  booleanValue?: boolean;
  longValue?: number | string;
  doubleValue?: number | string;
  stringValue?: string;
  blobValue?: string;
  arrayValue?: DataApiArrayValue;
}

export interface DataApiArrayValue {
  booleanValues?: (boolean | null)[];
  longValues?: (number | null)[];
  doubleValues?: (number | string | null)[];
  stringValues?: (string | null)[];
  arrayValues?: (DataApiArrayValue | null)[];
}

const arrayValueSchema: z.ZodType<DataApiArrayValue> = z.lazy(() =>
  z.object({
    booleanValues: z.array(z.boolean().nullable()).optional(),
    longValues: z.array(z.number().int().nullable()).optional(),
    doubleValues: z.array(z.union([z.number(), z.string()]).nullable()).optional(),
    stringValues: z.array(z.string().nullable()).optional(),
    arrayValues: z.array(arrayValueSchema.nullable()).optional(),
  }),
);

export const fieldSchema = z
  .object({
    isNull: z.literal(true).optional(),
    booleanValue: z.boolean().optional(),
    // Integers beyond 2^53 arrive as digit strings (the Data API route reads them from the raw JSON text).
    longValue: z.union([z.number().int(), z.string().regex(/^-?\d{1,19}$/)]).optional(),
    doubleValue: z.union([z.number(), z.enum(["NaN", "Infinity", "-Infinity"])]).optional(),
    stringValue: z.string().optional(),
    blobValue: z.base64().optional(),
    arrayValue: arrayValueSchema.optional(),
  })
  .refine((field) => Object.values(field).filter((value) => value !== undefined).length === 1, "a Field must have exactly one member");

export const typeHintSchema = z.enum(["DATE", "DECIMAL", "JSON", "TIME", "TIMESTAMP", "UUID"]);
export type TypeHint = z.infer<typeof typeHintSchema>;

export const sqlParameterSchema = z.object({
  name: z.string().min(1).regex(/^[A-Za-z0-9_]+$/, "letters, digits and _ only"),
  value: fieldSchema,
  typeHint: typeHintSchema.optional(),
});
export type SqlParameter = z.infer<typeof sqlParameterSchema>;

const arn = z.string().min(1).max(2048);
const target = { resourceArn: arn, secretArn: arn, database: z.string().max(64).optional(), schema: z.string().optional() };
const transactionIdField = z
  .string()
  .max(192)
  .optional()
  .transform((id) => (id === "" ? undefined : id));

export const executeStatementSchema = z.object({
  ...target,
  sql: z.string().min(1).max(65536),
  parameters: z.array(sqlParameterSchema).optional(),
  transactionId: transactionIdField,
  includeResultMetadata: z.boolean().optional(),
  continueAfterTimeout: z.boolean().optional(),
  resultSetOptions: z
    .object({
      decimalReturnType: z.enum(["STRING", "DOUBLE_OR_LONG"]).optional(),
      longReturnType: z.enum(["STRING", "LONG"]).optional(),
    })
    .optional(),
  formatRecordsAs: z.enum(["NONE", "JSON"]).optional(),
});
export type ExecuteStatementRequest = z.infer<typeof executeStatementSchema>;

export const batchExecuteStatementSchema = z.object({
  ...target,
  sql: z.string().min(1).max(65536),
  parameterSets: z.array(z.array(sqlParameterSchema)).optional(),
  transactionId: transactionIdField,
});
export type BatchExecuteStatementRequest = z.infer<typeof batchExecuteStatementSchema>;

export const beginTransactionSchema = z.object(target);
export type BeginTransactionRequest = z.infer<typeof beginTransactionSchema>;

export const endTransactionSchema = z.object({ resourceArn: arn, secretArn: arn, transactionId: z.string().min(1).max(192) });
export type EndTransactionRequest = z.infer<typeof endTransactionSchema>;

/** `columnMetadata` entries, with all 14 members as the service sends them. */
export interface DataApiColumnMetadata {
  arrayBaseColumnType: number;
  isAutoIncrement: boolean;
  isCaseSensitive: boolean;
  isCurrency: boolean;
  isSigned: boolean;
  label: string;
  name: string;
  nullable: number;
  precision: number;
  scale: number;
  schemaName: string;
  tableName: string;
  type: number;
  typeName: string;
}

/** The Data API's exception names, with the HTTP status each is sent with. */
export const DATA_API_EXCEPTIONS = {
  BadRequestException: 400,
  DatabaseErrorException: 400,
  StatementTimeoutException: 400,
  ValidationException: 400,
  UnsupportedResultException: 400,
  HttpEndpointNotEnabledException: 400,
  InternalServerErrorException: 400,
  ThrottlingException: 400,
  ForbiddenException: 403,
  AccessDeniedException: 403,
  TransactionNotFoundException: 404,
  // A client fault in the service's model (HTTP 400): the SDK does not retry it by itself.
  DatabaseResumingException: 400,
  ServiceUnavailableError: 503,
  DatabaseUnavailableException: 504,
} as const;
export type DataApiExceptionName = keyof typeof DATA_API_EXCEPTIONS;
