/**
 * A Lambda caller from functions/: bundled with the local esbuild (no Docker needed to synth), ESM,
 * Node 24 on ARM, in the VPC's private subnets, X-Ray tracing, a log group with retention. The
 * gateway's `grant` gives it the URL and the network path; it needs no other permission.
 */
import { Duration, RemovalPolicy, aws_ec2 as ec2, aws_lambda as lambda, aws_logs as logs } from "aws-cdk-lib";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";

export interface CallerFunctionProps {
  vpc: ec2.IVpc;
  /** Path of the handler file (exporting `handler`). */
  entry: string;
  /** The repository root (for package-lock.json). */
  projectRoot: string;
  serviceName: string;
  timeout?: Duration;
  environment?: Record<string, string>;
}

export class CallerFunction extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: CallerFunctionProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, "Logs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.function = new NodejsFunction(this, "Function", {
      entry: props.entry,
      handler: "handler",
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: props.timeout ?? Duration.seconds(10),
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
      bundling: {
        format: OutputFormat.ESM,
        target: "node24",
        minify: true,
        sourceMap: true,
        // ESM bundles of CommonJS dependencies need a require().
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
  }
}
