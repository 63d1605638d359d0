-- The canary's one row (Aurora DSQL: one DDL statement per file, re-runnable). The notes API is not
-- deployed on DSQL: its table's serial key does not exist there.
create table if not exists poolgate_canary (
  id int primary key,
  marker text not null,
  written_at timestamptz not null
);
