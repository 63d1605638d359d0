/**
 * Authentication for any RDS Data API client pointed at a gateway, through what every Data API
 * wrapper accepts: the AWS SDK v3 client's `requestHandler`. `poolgateRequestHandler()` adds
 * `x-poolgate-auth` (and any other headers) to each request, then hands it to the SDK's own Node
 * handler. Give it wherever an `RDSDataClient` is made:
 *
 * ```ts
 * const requestHandler = poolgateRequestHandler({ auth: iamAuth({ audience: "poolgate-prod" }) });
 * new RDSDataClient({ region, endpoint, requestHandler });            // the SDK, drizzle, kysely-data-api
 * new DataSource({ type: "aurora-postgres", ..., serviceConfigOptions: { endpoint, requestHandler } }); // TypeORM
 * dataApiClient({ ..., AWS: asAwsSdkV2(new RDSData({ region, endpoint, requestHandler })) });           // data-api-client 1.x
 * ```
 *
 * Structural types only: the package imports no AWS SDK types, and works with any SDK v3 release (the
 * TypeORM driver bundles its own).
 */
import type { IamAuth } from "./iam-auth.js";
import { POOLGATE_AUTH_HEADER } from "./iam-auth.js";

/** An AWS SDK v3 HTTP handler (NodeHttpHandler, FetchHttpHandler...), as far as this module uses it. */
export interface HttpHandlerLike {
  handle(request: unknown, options?: unknown): Promise<unknown>;
  destroy?(): void;
  updateHttpClientConfig?(key: never, value: never): void;
  httpHandlerConfigs?(): unknown;
  metadata?: { handlerProtocol: string };
}

/** Options of {@link poolgateRequestHandler}. */
export interface PoolgateRequestHandlerOptions {
  /** The caller's credential: `iamAuth(...)`, or any `{ header() }` (a bearer token: `() => "Bearer <token>"`). */
  auth?: Pick<IamAuth, "header">;
  /** More headers on every request, e.g. `{ "x-poolgate-extensions": "read-replicas" }`. */
  headers?: Record<string, string>;
  /**
   * The handler that sends the requests. Default: the SDK's `NodeHttpHandler` (from
   * `@smithy/node-http-handler`), loaded on the first request.
   */
  handler?: HttpHandlerLike;
}

/** A request as the SDK hands it to its HTTP handler: headers are a plain object. */
interface RequestWithHeaders {
  headers: Record<string, string>;
}

function hasHeaders(request: unknown): request is RequestWithHeaders {
  return typeof request === "object" && request !== null && "headers" in request && typeof request.headers === "object" && request.headers !== null;
}

/** An AWS SDK v3 request handler that authenticates every request to a Poolgate gateway. */
export class PoolgateRequestHandler {
  readonly metadata = { handlerProtocol: "http/1.1" };
  private inner: HttpHandlerLike | undefined;
  private loading: Promise<HttpHandlerLike> | undefined;
  /** Settings the SDK passed before the default handler was loaded, applied to it once it is. */
  private readonly pendingConfig: [string, unknown][] = [];

  constructor(private readonly options: PoolgateRequestHandlerOptions) {
    this.inner = options.handler;
  }

  /** Adds the Poolgate headers, then sends the request with the inner handler. */
  async handle<Request, Output>(request: Request, handlerOptions?: unknown): Promise<Output> {
    if (hasHeaders(request)) {
      Object.assign(request.headers, this.options.headers);
      if (this.options.auth) request.headers[POOLGATE_AUTH_HEADER] = await this.options.auth.header();
    }
    const inner = this.inner ?? (await this.load());
    return (await inner.handle(request, handlerOptions)) as Output;
  }

  updateHttpClientConfig(key: string, value: unknown): void {
    if (this.inner === undefined) this.pendingConfig.push([key, value]);
    else (this.inner.updateHttpClientConfig as ((key: string, value: unknown) => void) | undefined)?.call(this.inner, key, value);
  }

  httpHandlerConfigs(): Record<string, unknown> {
    return (this.inner?.httpHandlerConfigs?.() as Record<string, unknown> | undefined) ?? {};
  }

  destroy(): void {
    this.inner?.destroy?.();
  }

  private load(): Promise<HttpHandlerLike> {
    this.loading ??= import("@smithy/node-http-handler").then(({ NodeHttpHandler }) => {
      const inner = new NodeHttpHandler();
      for (const [key, value] of this.pendingConfig.splice(0)) inner.updateHttpClientConfig(key as never, value as never);
      this.inner = inner;
      return inner;
    });
    return this.loading;
  }
}

/**
 * The one way to authenticate any Data API client to a gateway: pass the result as `requestHandler`
 * to `new RDSDataClient(...)` / `new RDSData(...)`, or inside TypeORM's `serviceConfigOptions`.
 */
export function poolgateRequestHandler(options: PoolgateRequestHandlerOptions = {}): PoolgateRequestHandler {
  return new PoolgateRequestHandler(options);
}

/** The AWS SDK v3 aggregated Data API client (`RDSData`), as far as {@link asAwsSdkV2} uses it. */
export interface DataApiClientLike {
  executeStatement(input: never): Promise<unknown>;
  batchExecuteStatement(input: never): Promise<unknown>;
  beginTransaction(input: never): Promise<unknown>;
  commitTransaction(input: never): Promise<unknown>;
  rollbackTransaction(input: never): Promise<unknown>;
}

/** An AWS SDK v2 request, as v2-era code uses it: `.promise()`. */
export interface AwsSdkV2Request {
  promise(): Promise<unknown>;
}

/** The part of the AWS SDK v2 namespace a v2-era wrapper uses: `new AWS.RDSDataService(options)`. */
export interface AwsSdkV2Namespace {
  RDSDataService: new (options?: unknown) => Record<keyof DataApiClientLike, (params: unknown) => AwsSdkV2Request>;
}

const OPERATIONS: readonly (keyof DataApiClientLike)[] = ["executeStatement", "batchExecuteStatement", "beginTransaction", "commitTransaction", "rollbackTransaction"];

/**
 * A v3 `RDSData` client (built with {@link poolgateRequestHandler}) in the shape of the AWS SDK v2
 * namespace, for wrappers written for SDK v2 that take the SDK as an option (data-api-client 1.x:
 * `AWS`). The wrapper's own `options` are ignored: the client given here is already configured.
 */
export function asAwsSdkV2(client: DataApiClientLike): AwsSdkV2Namespace {
  class RDSDataService {
    constructor(_options?: unknown) {
      const operations = client as unknown as Record<keyof DataApiClientLike, (input: unknown) => Promise<unknown>>;
      for (const operation of OPERATIONS) {
        (this as unknown as Record<string, unknown>)[operation] = (params: unknown): AwsSdkV2Request => ({ promise: () => operations[operation](params) });
      }
    }
  }
  return { RDSDataService: RDSDataService as unknown as AwsSdkV2Namespace["RDSDataService"] };
}
