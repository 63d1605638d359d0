/**
 * Where a request's time went, gathered for query insights only while they are on (the plan carries
 * undefined otherwise, and every hook is one check of that): when the work was planned, and how long
 * it held a session, running on the database. The rest of its time is waiting: for a route (a failover
 * hold, a replica to catch up), a session, a transaction's turn, and between retries.
 */
export interface WorkTiming {
  /** Clock.now() when the work was planned. */
  readonly startedAt: number;
  /** Milliseconds spent on a leased session (every attempt's, summed). */
  databaseMs: number;
}
