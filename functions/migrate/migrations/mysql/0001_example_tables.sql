-- The canary's one row (the notes API is deployed with PostgreSQL only). MySQL commits DDL at once:
-- keep each migration re-runnable (IF NOT EXISTS), since a failed file is not rolled back.
create table if not exists poolgate_canary (
  id int primary key,
  marker varchar(200) not null,
  written_at datetime not null
);
