import { RDSDataClient, ExecuteStatementCommand, BeginTransactionCommand, CommitTransactionCommand, BatchExecuteStatementCommand } from "@aws-sdk/client-rds-data";
import { startTestGateway } from "../test/support/gateway.ts";
const url = process.argv[2]!;
const gw = await startTestGateway({ clusters: { default: { writerUrl: url } } });
const client = new RDSDataClient({ region: "us-east-1", endpoint: gw.baseUrl, credentials: { accessKeyId: "x", secretAccessKey: "y" } });
const base = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-test", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf" };
const mysql = url.startsWith("mysql");
try {
  await client.send(new ExecuteStatementCommand({ ...base, sql: "drop table if exists sdk_t" }));
  console.log(await client.send(new ExecuteStatementCommand({ ...base, sql: mysql ? "create table sdk_t (id int auto_increment primary key, name varchar(20), at datetime(3), ok boolean)" : "create table sdk_t (id serial primary key, name text, at timestamptz, ok boolean)" })));
  const ins = await client.send(new ExecuteStatementCommand({ ...base, sql: "insert into sdk_t (name, at, ok) values (:name, :at, :ok)", parameters: [{ name: "name", value: { stringValue: "a" } }, { name: "at", value: { stringValue: "2024-01-15 12:34:56.123" }, typeHint: "TIMESTAMP" }, { name: "ok", value: { booleanValue: true } }] }));
  console.log("insert", ins.numberOfRecordsUpdated, JSON.stringify(ins.generatedFields));
  const sel = await client.send(new ExecuteStatementCommand({ ...base, sql: "select * from sdk_t", includeResultMetadata: true }));
  console.log("select", JSON.stringify(sel.records), sel.columnMetadata?.map((c) => `${c.name}:${c.typeName}:${c.type}`));
  const tx = await client.send(new BeginTransactionCommand(base));
  await client.send(new ExecuteStatementCommand({ ...base, sql: "insert into sdk_t (name) values (:n)", parameters: [{ name: "n", value: { stringValue: "tx" } }], transactionId: tx.transactionId }));
  console.log(await client.send(new CommitTransactionCommand({ ...base, transactionId: tx.transactionId })));
  const b = await client.send(new BatchExecuteStatementCommand({ ...base, sql: "insert into sdk_t (name) values (:n)", parameterSets: [[{ name: "n", value: { stringValue: "b1" } }], [{ name: "n", value: { stringValue: "b2" } }]] }));
  console.log("batch", JSON.stringify(b.updateResults));
  try { await client.send(new ExecuteStatementCommand({ ...base, sql: "select * from nope" })); } catch (err: any) { console.log("err", err.name, err.message, err.$metadata?.httpStatusCode, err.$metadata?.requestId); }
  try { await client.send(new CommitTransactionCommand({ ...base, transactionId: "nope" })); } catch (err: any) { console.log("err", err.name, err.message); }
} finally { await gw.stop(); }
