/**
 * The example notes API: the functions/notes-api handler behind an HTTP API (API Gateway v2) with IAM
 * authorisation on every route (callers sign with SigV4 and need execute-api:Invoke), access logs and
 * stage throttling. The function calls the gateway as a read-write principal; its reserved
 * concurrency bounds its calls in flight there, and its timeout stays below the load balancer's.
 */
import { RemovalPolicy, aws_apigatewayv2 as apigw, aws_ec2 as ec2, aws_logs as logs } from "aws-cdk-lib";
import { HttpIamAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Construct } from "constructs";
import { CallerFunction } from "./caller-function.js";
import type { PoolgateGateway } from "./gateway-service.js";

export interface NotesApiProps {
  vpc: ec2.IVpc;
  gateway: PoolgateGateway;
  projectRoot: string;
  /** Concurrent executions of the function (default 50): its calls in flight at the gateway. */
  reservedConcurrency?: number;
}

/** The routes the handler serves (functions/notes-api/handler.ts). */
export const NOTES_ROUTES: readonly [apigw.HttpMethod, string][] = [
  [apigw.HttpMethod.GET, "/notes"],
  [apigw.HttpMethod.POST, "/notes"],
  [apigw.HttpMethod.GET, "/notes/{id}"],
  [apigw.HttpMethod.PUT, "/notes/{id}"],
  [apigw.HttpMethod.DELETE, "/notes/{id}"],
];

export class NotesApi extends Construct {
  readonly handler: CallerFunction;
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;

  constructor(scope: Construct, id: string, props: NotesApiProps) {
    super(scope, id);
    this.handler = new CallerFunction(this, "Handler", {
      vpc: props.vpc,
      entry: `${props.projectRoot}/functions/notes-api/handler.ts`,
      projectRoot: props.projectRoot,
      serviceName: "notes-api",
      reservedConcurrency: props.reservedConcurrency ?? 50,
    });
    props.gateway.grantFunction(this.handler.function, { access: "read-write" });

    this.api = new apigw.HttpApi(this, "HttpApi", {
      description: "Poolgate example: notes over the gateway",
      createDefaultStage: false,
      defaultAuthorizer: new HttpIamAuthorizer(),
    });
    const accessLogs = new logs.LogGroup(this, "AccessLogs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.stage = this.api.addStage("DefaultStage", {
      stageName: "$default",
      autoDeploy: true,
      accessLogSettings: { destination: new apigw.LogGroupLogDestination(accessLogs) },
      // Below what the function's reserved concurrency serves at about 100 ms per request.
      throttle: { rateLimit: 200, burstLimit: 100 },
    });
    const integration = new HttpLambdaIntegration("Handler", this.handler.function);
    for (const [method, path] of NOTES_ROUTES) this.api.addRoutes({ path, methods: [method], integration });
  }
}
