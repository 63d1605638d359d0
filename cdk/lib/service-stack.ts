/**
 * The stateless stack: the gateway service, the Lambda callers (the notes API behind its HTTP API, the
 * canary) and the failover health checks, on the database stack's network and database target. It
 * depends on the database stack, so it is deployed after the schema migrations ran.
 */
import { CfnOutput, Stack, type StackProps, aws_ec2 as ec2, aws_iam as iam } from "aws-cdk-lib";
import type { Construct } from "constructs";
import type { GatewayDatabase } from "../constructs/database-target.js";
import { FailoverHealth } from "../constructs/failover-health.js";
import { type GatewayGrant, PoolgateGateway, type PoolgateGatewayProps } from "../constructs/gateway-service.js";
import { NotesApi } from "../constructs/notes-api.js";

/** An IAM role granted from outside the stack (an operator, a CI pipeline). */
export interface RoleGrant extends GatewayGrant {
  roleArn: string;
}

export interface ServiceStackProps extends StackProps {
  vpc: ec2.IVpc;
  database: GatewayDatabase;
  /** The repository root: the Dockerfile's directory and the functions' project root. */
  projectRoot: string;
  gateway?: Omit<PoolgateGatewayProps, "vpc" | "database" | "imageDirectory">;
  /** Roles made principals of the gateway. */
  roleGrants?: RoleGrant[];
  /** Networks (CIDRs) admitted to the load balancer, for granted roles' clients outside the VPC's functions. */
  callerCidrs?: string[];
  /** The notes API function's reserved concurrency (default 50). */
  notesApiConcurrency?: number;
}

export class PoolgateServiceStack extends Stack {
  readonly gateway: PoolgateGateway;
  readonly notesApi: NotesApi | undefined;
  readonly health: FailoverHealth;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    this.gateway = new PoolgateGateway(this, "Gateway", {
      vpc: props.vpc,
      database: props.database,
      imageDirectory: props.projectRoot,
      ...props.gateway,
    });
    for (const [i, { roleArn, ...grant }] of (props.roleGrants ?? []).entries()) {
      this.gateway.grantRole(iam.Role.fromRoleArn(this, `GrantedRole${i}`, roleArn, { mutable: false }), grant);
    }
    for (const cidr of props.callerCidrs ?? []) this.gateway.allowCallersFrom(ec2.Peer.ipv4(cidr), cidr);
    // The example API needs its table, written for PostgreSQL (RETURNING, $n, a serial key).
    if (props.database.hasNotesTable) {
      this.notesApi = new NotesApi(this, "NotesApi", {
        vpc: props.vpc,
        gateway: this.gateway,
        projectRoot: props.projectRoot,
        ...(props.notesApiConcurrency === undefined ? {} : { reservedConcurrency: props.notesApiConcurrency }),
      });
    }
    this.health = new FailoverHealth(this, "FailoverHealth", {
      vpc: props.vpc,
      gateway: this.gateway,
      database: props.database,
      projectRoot: props.projectRoot,
    });
    const output = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    output("GatewayUrl", this.gateway.url, "The gateway inside the VPC (internal load balancer)");
    output("GatewayAudience", this.gateway.audience, "What callers sign for: iamAuth({ audience })");
    output("OperatorTokenSecret", this.gateway.operatorToken.secretArn, 'The operators\' bearer token: {"operator": "<token>"}');
    output("AlarmTopic", this.health.topic.topicArn, this.health.events ? "Alarms and RDS events: subscribe to it" : "Alarms: subscribe to it");
    output("Dashboard", this.health.dashboard.dashboardName, "The CloudWatch dashboard");
    if (this.health.hook) output("FailoverHookLogGroup", this.health.hook.logGroup.logGroupName, "Logs of the failover hook");
    output("CanaryLogGroup", this.health.canary.logGroup.logGroupName, "Logs of the canary");
    if (this.notesApi) output("NotesApiUrl", this.notesApi.api.apiEndpoint, "The example notes API (IAM-authorised: sign requests with SigV4, service execute-api)");
  }
}
