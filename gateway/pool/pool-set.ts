/**
 * Every pool of a cluster: one per endpoint and database login. Endpoints hold what the topology
 * knows of an instance; pools hold sessions; this is where a request, knowing its endpoint and the
 * login it runs as, finds its pool — so a session opened under one login is never lent under another.
 * The set knows endpoints only as keys with a name.
 */
import { type LoginKey, READ_WRITE_LOGIN } from "../credentials/logins.js";
import type { Pool } from "./pool.js";

export class PoolSet<Endpoint extends { readonly name: string }> {
  private readonly pools = new Map<Endpoint, Map<LoginKey, Pool>>();

  constructor(
    /** Every login of the cluster, the read-write one first. */
    readonly logins: readonly LoginKey[],
    private readonly create: (endpoint: Endpoint, login: LoginKey) => Pool,
  ) {}

  /** Creates the endpoint's pools, one per login. */
  add(endpoint: Endpoint): ReadonlyMap<LoginKey, Pool> {
    const pools = new Map(this.logins.map((login) => [login, this.create(endpoint, login)]));
    this.pools.set(endpoint, pools);
    return pools;
  }

  /** Forgets the endpoint; returns its pools for the caller to close. */
  delete(endpoint: Endpoint): Pool[] {
    const pools = [...(this.pools.get(endpoint)?.values() ?? [])];
    this.pools.delete(endpoint);
    return pools;
  }

  /** The endpoint's pool for a login (default: the read-write login). */
  get(endpoint: Endpoint, login: LoginKey = READ_WRITE_LOGIN): Pool {
    const pool = this.pools.get(endpoint)?.get(login);
    if (pool === undefined) throw new Error(`no pool for ${endpoint.name} and login ${login}`);
    return pool;
  }

  /** The endpoint's pools by login. */
  of(endpoint: Endpoint): ReadonlyMap<LoginKey, Pool> {
    return this.pools.get(endpoint) ?? new Map();
  }

  /** Every pool with its endpoint and login. */
  *all(): Iterable<{ endpoint: Endpoint; login: LoginKey; pool: Pool }> {
    for (const [endpoint, pools] of this.pools) for (const [login, pool] of pools) yield { endpoint, login, pool };
  }
}
