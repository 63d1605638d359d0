/**
 * The client's plain wire types describe exactly what the gateway's zod schemas accept and answer.
 * The assertions are checked by the type checker (`npm run typecheck`), which fails on any drift.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { DatabaseErrorInfo as SchemaDatabaseError, ErrorBody as SchemaErrorBody, ErrorCode as SchemaErrorCode } from "../schemas/errors.js";
import type {
  BatchResponse as SchemaBatchResponse,
  BeginResponse as SchemaBeginResponse,
  Column as SchemaColumn,
  EndTransactionResponse as SchemaEndTransactionResponse,
  Intent as SchemaIntent,
  Isolation as SchemaIsolation,
  Param as SchemaParam,
  QueryResponse as SchemaQueryResponse,
  StreamEnd as SchemaStreamEnd,
  StreamHeader as SchemaStreamHeader,
} from "../schemas/query.js";
import type {
  BatchResponse,
  BeginResponse,
  Column,
  DatabaseErrorInfo,
  EndTransactionResponse,
  ErrorBody,
  ErrorCode,
  Intent,
  Isolation,
  Param,
  QueryResponse,
  StreamEnd,
  StreamHeader,
} from "./wire.js";

describe("the client's wire types", () => {
  it("are the gateway schemas' types", () => {
    expectTypeOf<Param>().toEqualTypeOf<SchemaParam>();
    expectTypeOf<Intent>().toEqualTypeOf<SchemaIntent>();
    expectTypeOf<Isolation>().toEqualTypeOf<SchemaIsolation>();
    expectTypeOf<Column>().toEqualTypeOf<SchemaColumn>();
    expectTypeOf<QueryResponse>().toEqualTypeOf<SchemaQueryResponse>();
    expectTypeOf<BatchResponse>().toEqualTypeOf<SchemaBatchResponse>();
    expectTypeOf<BeginResponse>().toEqualTypeOf<SchemaBeginResponse>();
    expectTypeOf<EndTransactionResponse>().toEqualTypeOf<SchemaEndTransactionResponse>();
    expectTypeOf<ErrorCode>().toEqualTypeOf<SchemaErrorCode>();
    expectTypeOf<DatabaseErrorInfo>().toEqualTypeOf<SchemaDatabaseError>();
    expectTypeOf<ErrorBody>().toEqualTypeOf<SchemaErrorBody>();
    expectTypeOf<StreamHeader>().toEqualTypeOf<SchemaStreamHeader>();
    expectTypeOf<StreamEnd>().toEqualTypeOf<SchemaStreamEnd>();
  });
});
