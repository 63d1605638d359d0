/**
 * Every cdk-nag AwsSolutions finding Poolgate accepts, each with its reason. Anything not listed here
 * fails synth (and the cdk-nag test).
 */
import { Stack, Validations, type aws_ecs as ecs, type aws_lambda as lambda } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import { AuroraTarget } from "../constructs/aurora-target.js";
import type { PoolgateDatabaseStack } from "./database-stack.js";
import type { PoolgateServiceStack } from "./service-stack.js";

function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

export function acknowledgeFindings(database: PoolgateDatabaseStack, service: PoolgateServiceStack): void {
  // Only on the documented teardown path (-c deletionProtection=false): the default keeps it on.
  // (RDS10 is an Aurora rule; cdk-nag has none for Aurora DSQL clusters.)
  if (database.target instanceof AuroraTarget && !database.target.deletionProtection) {
    acknowledge(
      database.target.database.cluster,
      "AwsSolutions-RDS10",
      "Deletion protection is off on purpose (-c deletionProtection=false, docs/deploying.md's teardown): the cluster's removal policy is SNAPSHOT, so destroying the stack keeps a final snapshot.",
    );
  }
  if (database.target.engine === "mysql") {
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
    for (const stack of [database, service]) {
      acknowledge(
        stack,
        `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${policy}]`,
        `The functions (the callers, the schema migrations and the custom-resource provider) use AWS's managed ${policy} (their own logs and VPC network interfaces), which carries no data access.`,
      );
    }
  }
  acknowledge(
    service,
    "AwsSolutions-IAM5[Resource::*]",
    "Actions that take no resource or are scoped by condition: X-Ray PutTraceSegments/PutTelemetryRecords and the sampling reads for the callers' tracing and the gateway's ADOT collector (-c tracing=true), ecr:GetAuthorizationToken for the gateway's image pull, and ecs:ListTasks limited to the gateway's ECS cluster by the ecs:cluster condition.",
  );
  acknowledge(database, "AwsSolutions-IAM5[Resource::*]", "X-Ray PutTraceSegments/PutTelemetryRecords for the schema-migration function's tracing: actions that take no resource.");
  const migrationsFunction = database.resolve((database.migrations.function.node.defaultChild as lambda.CfnFunction).logicalId) as string;
  acknowledge(
    database,
    `AwsSolutions-IAM5[Resource::<${migrationsFunction}.Arn>:*]`,
    "The custom-resource provider may invoke any version of the schema-migration function, and only that function.",
  );
  // Each task's ARN names its cluster and an id chosen at launch: the hook and the canary describe the
  // gateway cluster's tasks, whatever their ids (and the ecs:cluster condition holds them to it).
  const gatewayCluster = service.resolve((service.gateway.cluster.node.defaultChild as ecs.CfnCluster).logicalId) as string;
  acknowledge(
    service,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${Stack.of(service).region}:<AWS::AccountId>:task/<${gatewayCluster}>/*]`,
    "ecs:DescribeTasks on the gateway cluster's tasks, whose ids are chosen at launch: the failover hook and the canary reach every running task.",
  );
  acknowledge(
    database.network,
    "AwsSolutions-EC23",
    "The interface endpoints admit HTTPS from the VPC's own CIDR block (a reference cdk-nag cannot evaluate), not from the internet.",
  );
  if (service.health.events) {
    acknowledge(
      service.health.events.deadLetters,
      "AwsSolutions-SQS3",
      "This queue is itself the dead-letter queue: of the RDS-event rules' targets and of the failover hook's asynchronous invocations.",
    );
  }
  acknowledge(
    service,
    "AwsSolutions-ECS2",
    "The gateway's environment holds configuration only (endpoints, secret ARNs, pool size, timeouts); the task reads the database credentials from Secrets Manager itself and gets the peer key as an ECS secret.",
  );
  acknowledge(
    service,
    "AwsSolutions-SMG4",
    "The peer key is generated, used only between the gateway's own tasks and read at task start: rotate it with a forced new deployment, so that every task holds the same key. The operator token is generated and re-read by the gateway every 5 minutes: rotate it by writing a new value (two tokens per principal may overlap). The result cache's Valkey password (-c cache=valkey) is generated, set on the cache's user by CloudFormation and read at task start: rotating it means setting a new value on both the secret and the cache's user (ModifyUser), then a forced new deployment of the tasks.",
  );
  acknowledge(service, "AwsSolutions-S1", "The bucket receives the load balancer's access logs; logging access to it would only log the log writes.");
}
