-- Poolgate's database logins on MySQL and Aurora MySQL (tested on MariaDB), run by an administrator
-- (on Aurora, the master user) for the application's database: here app.
CREATE USER 'poolgate_rw'@'%' IDENTIFIED BY '...';  -- or IDENTIFIED WITH AWSAuthenticationPlugin AS 'RDS', for IAM tokens
CREATE USER 'poolgate_ro'@'%' IDENTIFIED BY '...';
GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON app.* TO 'poolgate_rw'@'%';
-- No EXECUTE: a routine runs with its definer's rights. No PROCESS, CONNECTION_ADMIN or SUPER: it can
-- KILL only its own sessions.
GRANT SELECT ON app.* TO 'poolgate_ro'@'%';

-- The gateway's idempotency record (idempotency.table), made here so that the read-write login needs
-- no CREATE. The read-only login's SELECT on app.* reads it too: give it a database of its own (and
-- set idempotency.table to it) where principals must not read each other's keys and answers.
USE app;
CREATE TABLE IF NOT EXISTS `poolgate_idempotency_keys` (
  principal VARCHAR(255) NOT NULL,
  idempotency_key VARCHAR(255) NOT NULL,
  fingerprint CHAR(64) NOT NULL,
  answer LONGTEXT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  PRIMARY KEY (principal, idempotency_key),
  KEY expiry (expires_at_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
