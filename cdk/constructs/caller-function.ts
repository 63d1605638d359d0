/**
 * A Lambda caller from functions/: bundled with the local esbuild (no Docker needed to synth), ESM,
 * Node 24 on ARM, in the VPC's private subnets, X-Ray tracing, a log group with retention, a reserved
 * concurrency and a timeout well below the load balancer's idle timeout. The gateway's `grantFunction`
 * gives it the URL, the network path and a principal limited to that concurrency and timeout; it needs
 * no other permission.
 */
import { Duration, RemovalPolicy, aws_ec2 as ec2, aws_lambda as lambda, aws_logs as logs } from "aws-cdk-lib";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import { esmBundling } from "./function-bundling.js";

export interface CallerFunctionProps {
  vpc: ec2.IVpc;
  /** Path of the handler file (exporting `handler`). */
  entry: string;
  /** The repository root (for package-lock.json). */
  projectRoot: string;
  serviceName: string;
  /** Default 10 s. */
  timeout?: Duration;
  /** Concurrent executions reserved for (and allowed to) the function. */
  reservedConcurrency: number;
  environment?: Record<string, string>;
}

export class CallerFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: CallerFunctionProps) {
    super(scope, id);
    if (!Number.isInteger(props.reservedConcurrency) || props.reservedConcurrency < 1) {
      throw new Error(`${this.node.path}: reservedConcurrency must be a whole number of at least 1, not ${props.reservedConcurrency}`);
    }
    const logGroup = new logs.LogGroup(this, "Logs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.logGroup = logGroup;
    this.function = new NodejsFunction(this, "Function", {
      entry: props.entry,
      handler: "handler",
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrency,
      vpc: props.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environment: {
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: "Poolgate",
        NODE_OPTIONS: "--enable-source-maps",
        ...props.environment,
      },
      bundling: esmBundling(),
    });
  }
}
