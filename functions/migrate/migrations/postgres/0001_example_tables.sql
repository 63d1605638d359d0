-- The tables the example functions use: the notes API's notes and the canary's one row.
create table if not exists notes (
  id serial primary key,
  title text not null unique,
  body text not null default '',
  updated_at timestamptz not null default now()
);
create table if not exists poolgate_canary (
  id int primary key,
  marker text not null,
  written_at timestamptz not null
);
