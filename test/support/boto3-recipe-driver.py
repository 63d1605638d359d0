"""
Drives docs/data-api-python.md's recipe module (extracted beside this script as poolgate_rds_data.py
by test/integration/data-api/data-api-python.test.ts) against a gateway, and prints what it saw as one JSON
object on stdout. Settings come from the environment: GATEWAY_URL, REGION, AUTH (bearer|iam), TOKEN
or AUDIENCE, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, TABLE.
"""
import json
import os

import boto3
from botocore.exceptions import ClientError
from poolgate_rds_data import bearer_auth, iam_auth, poolgate_rds_data

ARNS = {
    "resourceArn": "arn:aws:rds:eu-west-1:111122223333:cluster:app",
    "secretArn": "arn:aws:secretsmanager:eu-west-1:111122223333:secret:app",
}
env = os.environ
region = env["REGION"]
table = env["TABLE"]
session = boto3.Session(
    aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
    aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    aws_session_token=env.get("AWS_SESSION_TOKEN"),
    region_name=region,
)
auth = bearer_auth(env["TOKEN"]) if env["AUTH"] == "bearer" else iam_auth(session, env["AUDIENCE"], region)
data = poolgate_rds_data(session, env["GATEWAY_URL"], auth, region)
seen = {}

# The same client without the recipe's hook: the gateway refuses it.
plain = session.client("rds-data", region_name=region, endpoint_url=env["GATEWAY_URL"])
try:
    plain.execute_statement(sql="select 1", **ARNS)
    seen["without_hook"] = "accepted"
except ClientError as err:
    seen["without_hook"] = err.response["Error"]["Code"]

data.execute_statement(sql=f"create table {table} (id int primary key, title varchar(100))", **ARNS)
inserted = data.execute_statement(
    sql=f"insert into {table} (id, title) values (:id, :title)",
    parameters=[{"name": "id", "value": {"longValue": 1}}, {"name": "title", "value": {"stringValue": "first"}}],
    **ARNS,
)
seen["inserted"] = inserted["numberOfRecordsUpdated"]

batch = data.batch_execute_statement(
    sql=f"insert into {table} (id, title) values (:id, :title)",
    parameterSets=[
        [{"name": "id", "value": {"longValue": 2}}, {"name": "title", "value": {"stringValue": "second"}}],
        [{"name": "id", "value": {"longValue": 3}}, {"name": "title", "value": {"stringValue": "third"}}],
    ],
    **ARNS,
)
seen["batch_results"] = len(batch["updateResults"])

committed = data.begin_transaction(**ARNS)["transactionId"]
data.execute_statement(sql=f"update {table} set title = 'changed' where id = 1", transactionId=committed, **ARNS)
seen["commit"] = data.commit_transaction(transactionId=committed, **ARNS)["transactionStatus"]

rolled_back = data.begin_transaction(**ARNS)["transactionId"]
data.execute_statement(sql=f"delete from {table}", transactionId=rolled_back, **ARNS)
seen["rollback"] = data.rollback_transaction(transactionId=rolled_back, **ARNS)["transactionStatus"]

selected = data.execute_statement(
    sql=f"select id, title from {table} where id >= :from order by id",
    parameters=[{"name": "from", "value": {"longValue": 1}}],
    includeResultMetadata=True,
    **ARNS,
)
seen["columns"] = [column["label"] for column in selected["columnMetadata"]]
seen["rows"] = [[field.get("longValue", field.get("stringValue")) for field in record] for record in selected["records"]]

as_json = data.execute_statement(sql=f"select id, title from {table} order by id", formatRecordsAs="JSON", **ARNS)
seen["json_rows"] = json.loads(as_json["formattedRecords"])

try:
    data.execute_statement(sql=f"insert into {table} (id, title) values (1, 'again')", **ARNS)
    seen["duplicate"] = "accepted"
except ClientError as err:
    seen["duplicate"] = err.response["Error"]["Code"]

print(json.dumps(seen))
