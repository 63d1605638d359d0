/**
 * The part of data-api-client 1.x (which ships no types) that the wrapper tests use: a v2-era wrapper
 * that takes the AWS SDK as its `AWS` option.
 */
declare module "data-api-client" {
  interface DataApiQueryResult {
    records?: Record<string, unknown>[];
    numberOfRecordsUpdated?: number;
    insertId?: number;
    updateResults?: { generatedFields: unknown[] }[];
  }
  interface DataApiTransaction {
    query(sql: string, parameters?: Record<string, unknown> | Record<string, unknown>[]): DataApiTransaction;
    query(next: (previous: DataApiQueryResult) => [string, Record<string, unknown>?]): DataApiTransaction;
    rollback(handler: (error: unknown, status: unknown) => void): DataApiTransaction;
    commit(): Promise<(DataApiQueryResult | { transactionStatus: string })[]>;
  }
  interface DataApiClient {
    query(sql: string, parameters?: Record<string, unknown> | Record<string, unknown>[][]): Promise<DataApiQueryResult>;
    transaction(): DataApiTransaction;
  }
  interface DataApiClientOptions {
    engine?: "mysql" | "pg";
    resourceArn: string;
    secretArn: string;
    database?: string;
    AWS?: unknown;
    options?: Record<string, unknown>;
    hydrateColumnNames?: boolean;
  }
  export default function dataApiClient(options: DataApiClientOptions): DataApiClient;
}
