/**
 * The gateway's traces to AWS X-Ray (docs/tracing.md): an AWS Distro for OpenTelemetry (ADOT)
 * collector as a sidecar in the gateway's task, receiving OTLP on localhost and exporting to X-Ray with
 * its bundled `ecs-xray.yaml` pipeline. This is what Amazon ECS documents for Fargate tasks
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/trace-data.html, the container
 * definition in https://docs.aws.amazon.com/AmazonECS/latest/developerguide/trace-data-containerdefinitions.html),
 * and X-Ray's migration guide names ADOT as the way OpenTelemetry traces reach X-Ray
 * (https://docs.aws.amazon.com/xray/latest/devguide/xray-sdk-migration.html). X-Ray's own OTLP
 * endpoint would need every export signed with SigV4 and CloudWatch Transaction Search turned on,
 * which a plain OTLP/HTTP exporter does not do: the sidecar signs, batches and retries for the task.
 */
import { aws_ecs as ecs, aws_iam as iam, aws_logs as logs } from "aws-cdk-lib";

/** The collector image AWS's task definition examples name (public ECR). */
export const ADOT_COLLECTOR_IMAGE = "public.ecr.aws/aws-observability/aws-otel-collector:latest";
/** OTLP/HTTP on the task's loopback: the gateway's `tracing.endpoint`. */
export const COLLECTOR_TRACES_URL = "http://127.0.0.1:4318/v1/traces";
export const COLLECTOR_CONTAINER = "aws-otel-collector";

/**
 * The X-Ray actions the collector calls (none takes a resource: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html),
 * the ones the ECS page lists for the integration.
 */
export const XRAY_WRITE_ACTIONS = ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"];

/** Adds the collector to the task, lets its role write to X-Ray, and starts the gateway after it. */
export function addTraceCollector(taskDefinition: ecs.FargateTaskDefinition, gateway: ecs.ContainerDefinition, logGroup: logs.ILogGroup): ecs.ContainerDefinition {
  const collector = taskDefinition.addContainer(COLLECTOR_CONTAINER, {
    image: ecs.ContainerImage.fromRegistry(ADOT_COLLECTOR_IMAGE),
    command: ["--config=/etc/ecs/ecs-xray.yaml"],
    essential: true,
    memoryReservationMiB: 64,
    logging: ecs.LogDrivers.awsLogs({ streamPrefix: "otel", logGroup }),
  });
  taskDefinition.addToTaskRolePolicy(new iam.PolicyStatement({ actions: XRAY_WRITE_ACTIONS, resources: ["*"] }));
  gateway.addContainerDependencies({ container: collector, condition: ecs.ContainerDependencyCondition.START });
  return collector;
}
