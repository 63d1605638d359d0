/**
 * Exactly-once writes for RDS Data API callers pointed at a gateway: `addIdempotencyKeys` adds the
 * gateway's documented extension header, `x-poolgate-idempotency-key`, to every write of an AWS SDK v3
 * `RDSDataClient` (ExecuteStatement and BatchExecuteStatement outside a transaction, CommitTransaction).
 * The key is set once per `send()`, so the SDK's own retries carry the same key: a write whose answer
 * was lost is answered from the gateway's record instead of being applied twice. A replayed answer
 * carries the response header `x-poolgate-idempotent-replay: true`.
 *
 * ```ts
 * const data = new RDSDataClient({ region, endpoint });
 * addIdempotencyKeys(data);                                   // a new UUID per write
 * addIdempotencyKeys(data, { keyOf: (input) => myKeyFor(input) }); // or keys of your own
 * ```
 *
 * A key it made itself is dropped, and the call sent again, when the gateway refuses it for SQL it
 * cannot make exactly-once (SQL with its own COMMIT, MySQL DDL): nothing had run.
 */
export const DATA_API_IDEMPOTENCY_HEADER = "x-poolgate-idempotency-key";

/** The Data API commands that write, and whether their input says they run inside a transaction. */
const WRITES = new Set(["ExecuteStatementCommand", "BatchExecuteStatementCommand", "CommitTransactionCommand"]);

/** The start of the gateway's refusal of a key for SQL it cannot make exactly-once. */
const REFUSAL = "idempotencyKey cannot make";

/** Where addIdempotencyKeys puts its middleware in the AWS SDK v3 stack. */
export interface IdempotencyStepOptions {
  step: "build";
  name: string;
  priority: "high";
}

/** The part of an AWS SDK v3 client that addIdempotencyKeys uses (structural: no SDK types imported). */
export interface SdkClientWithContext<Args extends { request: unknown; input: unknown }, Result> {
  middlewareStack: {
    add(middleware: (next: (args: Args) => Promise<Result>, context: { commandName?: string }) => (args: Args) => Promise<Result>, options: IdempotencyStepOptions): void;
  };
}

export interface IdempotencyKeyOptions {
  /**
   * The key of one write, from the command's input (return undefined for none). Default: a new UUID
   * per `send()` of a write.
   */
  keyOf?: (input: Record<string, unknown>, commandName: string) => string | undefined;
}

/** Adds the idempotency header to the client's writes: one middleware, step "build", name "poolgateIdempotencyKeys". */
export function addIdempotencyKeys<Args extends { request: unknown; input: unknown }, Result>(client: SdkClientWithContext<Args, Result>, options: IdempotencyKeyOptions = {}): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? "";
      const input = (typeof args.input === "object" && args.input !== null ? args.input : {}) as Record<string, unknown>;
      const write = WRITES.has(command) && (command === "CommitTransactionCommand" || input.transactionId === undefined);
      const request = args.request;
      if (!write || typeof request !== "object" || request === null || !("headers" in request) || typeof request.headers !== "object" || request.headers === null) return next(args);
      const headers = request.headers as Record<string, string>;
      const key = options.keyOf ? options.keyOf(input, command) : crypto.randomUUID();
      if (key === undefined) return next(args);
      headers[DATA_API_IDEMPOTENCY_HEADER] = key;
      try {
        return await next(args);
      } catch (err) {
        // A key of ours for SQL that commits by itself (MySQL DDL): refused before anything ran, so sent as it is.
        if (options.keyOf || !(err instanceof Error) || err.name !== "BadRequestException" || !err.message.includes(REFUSAL)) throw err;
        const without = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== DATA_API_IDEMPOTENCY_HEADER));
        // A copy of the request (its class kept): the first attempt's one may have been kept by the stack.
        const unkeyed = Object.assign(Object.create(Object.getPrototypeOf(request) as object) as object, request, { headers: without });
        return next(Object.assign({}, args, { request: unkeyed }));
      }
    },
    { step: "build", name: "poolgateIdempotencyKeys", priority: "high" },
  );
}
