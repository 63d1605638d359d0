/**
 * Whether the instance itself makes every session read-only: `default_transaction_read_only` on from
 * the server's configuration (ALTER SYSTEM, postgresql.conf, the command line, a parameter group), not
 * from a login's or a database's settings (a read-only login may be made so; the instance still takes
 * the writer's writes) nor a session's own SET (the caller's business). Such an instance takes no
 * writes though it is not in recovery: Aurora's `-old1` writer after a Blue/Green switchover stays
 * read-only until rebooted (docs/aurora.md). It is no writer and replicates from no one: a replica
 * with no position, which serves no reads (its lag is unknown).
 */
export const READ_ONLY_INSTANCE_SQL =
  "(SELECT setting = 'on' AND source IN ('configuration file', 'command line') FROM pg_settings WHERE name = 'default_transaction_read_only')";
