/**
 * Failover the Aurora way on the Aurora MySQL stand-in (aurora-mysql-standin.ts): a reader promoted is
 * `read_only` off with the other reader re-pointed at it, and instances are known by
 * `@@aurora_server_id`. The cases: failover-aurora-suite.ts.
 */
import { AURORA_MYSQL_LOAD } from "../../support/aurora-failover-load.js";
import { startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { STREAM_ROWS } from "./failover-aurora-cases.js";
import { auroraFailoverSuite } from "./failover-aurora-suite.js";

auroraFailoverSuite({
  standinName: "the Aurora MySQL stand-in",
  start: () => startAuroraMysqlStandin({ readerCount: 2, durable: true }),
  load: AURORA_MYSQL_LOAD,
  runId: "i34-mysql",
  onReaderSql: "select @@global.read_only as on_reader",
  onReader: (value) => Number(value) === 1,
  suites: {
    createTables: [
      "create table test.aurora_keyed (id int auto_increment primary key, k varchar(100) not null) engine=InnoDB",
      "create table test.aurora_tokens (id varchar(100) primary key) engine=InnoDB",
    ],
    keyedInsert: "insert into aurora_keyed (k) values (?)",
    keyedCounts: "select k, count(*) as n from test.aurora_keyed group by k",
    tokenInsert: "insert into aurora_tokens (id) values (?)",
    tokenRead: "select count(*) as n from aurora_tokens where id = ?",
    // MariaDB's Sequence engine: the rows 1..N as a table.
    streamSql: `select seq as g, sleep(if(seq % 100 = 0, 0.02, 0)) as slept from seq_1_to_${STREAM_ROWS}`,
  },
});
