-- Poolgate's database logins on PostgreSQL 14 or later, run by the database's owner (on Aurora
-- PostgreSQL, the master user) while connected to the application's database: here app, with its
-- tables in schema public. Safe to run again, CREATE ROLE aside.
CREATE ROLE poolgate_rw LOGIN PASSWORD '...';  -- or no password and GRANT rds_iam TO poolgate_rw, for IAM tokens
CREATE ROLE poolgate_ro LOGIN PASSWORD '...';
GRANT CONNECT ON DATABASE app TO poolgate_rw, poolgate_ro;
REVOKE TEMPORARY ON DATABASE app FROM PUBLIC;  -- no temporary tables for logins not granted them
REVOKE CREATE ON SCHEMA public FROM PUBLIC;    -- schema changes belong to a migration login

-- Tables: the read-write login reads and writes them, the read-only login reads them, now and later
-- (default privileges cover what the role running this creates; add FOR ROLE <creator> for another).
-- Not pg_read_all_data for the read-only login: it reads every schema, poolgate's below included.
GRANT USAGE ON SCHEMA public TO poolgate_rw, poolgate_ro;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO poolgate_rw;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO poolgate_rw;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO poolgate_ro;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO poolgate_rw;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO poolgate_rw;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO poolgate_ro;

-- Functions: PostgreSQL lets PUBLIC execute every new function, a SECURITY DEFINER one with its
-- owner's rights, whatever the caller's grants. Take that away, from existing functions and from those
-- created later, then grant back: every one to the read-write login, and to the read-only login only
-- those that just read, one by one, as in the commented line.
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON ALL ROUTINES IN SCHEMA public TO poolgate_rw;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON ROUTINES TO poolgate_rw;
-- GRANT EXECUTE ON FUNCTION public.monthly_totals(date) TO poolgate_ro;

-- The gateway's idempotency record (idempotency.table), made here so that the read-write login needs
-- no CREATE, and usable by that login only: it holds every principal's keys and stored answers.
CREATE SCHEMA IF NOT EXISTS "poolgate";
REVOKE ALL ON SCHEMA poolgate FROM PUBLIC;
CREATE TABLE IF NOT EXISTS "poolgate"."idempotency_keys" (
  principal text NOT NULL,
  idempotency_key text NOT NULL,
  fingerprint text NOT NULL,
  answer text,
  created_at_ms bigint NOT NULL,
  expires_at_ms bigint NOT NULL,
  PRIMARY KEY (principal, idempotency_key));
CREATE INDEX IF NOT EXISTS "idempotency_keys_expiry" ON "poolgate"."idempotency_keys" (expires_at_ms);
REVOKE ALL ON poolgate.idempotency_keys FROM PUBLIC;
GRANT USAGE ON SCHEMA poolgate TO poolgate_rw;
GRANT SELECT, INSERT, UPDATE, DELETE ON poolgate.idempotency_keys TO poolgate_rw;
