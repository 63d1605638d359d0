/**
 * Every cdk-nag AwsSolutions finding Poolgate accepts, each with its reason. Anything not listed here
 * fails synth (and the cdk-nag test).
 */
import { Validations } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import type { PoolgateDatabaseStack } from "./database-stack.js";
import type { PoolgateServiceStack } from "./service-stack.js";

function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

export function acknowledgeFindings(database: PoolgateDatabaseStack, service: PoolgateServiceStack): void {
  if (database.database.engine === "mysql") {
    acknowledge(
      database,
      "AwsSolutions-RDS11",
      "The default port: the cluster sits in isolated subnets and admits only the gateway's security group, so another port would add no protection.",
    );
    acknowledge(
      database,
      "AwsSolutions-RDS14",
      "Backtrack is not enabled: point-in-time recovery from the automated backups covers restores, and backtracking a cluster under the gateway would rewind acknowledged writes.",
    );
  }
  for (const policy of ["AWSLambdaBasicExecutionRole", "AWSLambdaVPCAccessExecutionRole"]) {
    acknowledge(
      service,
      `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${policy}]`,
      `The Lambda callers use AWS's managed ${policy} (their own logs and VPC network interfaces), which carries no data access.`,
    );
  }
  acknowledge(
    service,
    "AwsSolutions-IAM5[Resource::*]",
    "Account-wide actions that take no resource: X-Ray PutTraceSegments/PutTelemetryRecords for the callers' tracing, and ecr:GetAuthorizationToken for the gateway's image pull.",
  );
  acknowledge(
    service,
    "AwsSolutions-ECS2",
    "The gateway's environment holds configuration only (endpoints, secret ARNs, pool size, timeouts); the task reads the database credentials from Secrets Manager itself and gets the peer key as an ECS secret.",
  );
  acknowledge(
    service,
    "AwsSolutions-SMG4",
    "The peer key is generated, used only between the gateway's own tasks and read at task start: rotate it with a forced new deployment, so that every task holds the same key. The operator token is generated and re-read by the gateway every 5 minutes: rotate it by writing a new value (two tokens per principal may overlap).",
  );
  acknowledge(service, "AwsSolutions-S1", "The bucket receives the load balancer's access logs; logging access to it would only log the log writes.");
}
