-- Poolgate's database logins on MySQL and Aurora MySQL (tested on MariaDB), run by an administrator
-- (on Aurora, the master user) for the application's database: here app.
CREATE USER 'poolgate_rw'@'%' IDENTIFIED BY '...';  -- or IDENTIFIED WITH AWSAuthenticationPlugin AS 'RDS', for IAM tokens
CREATE USER 'poolgate_ro'@'%' IDENTIFIED BY '...';
GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON app.* TO 'poolgate_rw'@'%';
-- No EXECUTE: a routine runs with its definer's rights. No PROCESS, CONNECTION_ADMIN or SUPER: it can
-- KILL only its own sessions.
GRANT SELECT ON app.* TO 'poolgate_ro'@'%';

-- The gateway's idempotency record (idempotency.table), made here so that the read-write login needs
-- no CREATE, in a database of its own that the grants on app.* do not reach: only the read-write login
-- may use it (it holds every principal's keys and stored answers); no other login is granted it.
CREATE DATABASE IF NOT EXISTS `poolgate_internal`;
CREATE TABLE IF NOT EXISTS `poolgate_internal`.`idempotency_keys` (
  principal VARCHAR(255) NOT NULL,
  idempotency_key VARCHAR(255) NOT NULL,
  fingerprint CHAR(64) NOT NULL,
  answer LONGTEXT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  PRIMARY KEY (principal, idempotency_key),
  KEY expiry (expires_at_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
GRANT SELECT, INSERT, UPDATE, DELETE ON `poolgate_internal`.`idempotency_keys` TO 'poolgate_rw'@'%';
