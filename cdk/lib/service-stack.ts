/**
 * The stateless stack: the gateway service, the Lambda callers (the notes API and the canary) and the
 * failover health checks, on the database stack's network and cluster.
 */
import { Stack, type StackProps, aws_ec2 as ec2 } from "aws-cdk-lib";
import type { Construct } from "constructs";
import type { PoolgateDatabase } from "../constructs/aurora-cluster.js";
import { CallerFunction } from "../constructs/caller-function.js";
import { FailoverHealth } from "../constructs/failover-health.js";
import { PoolgateGateway, type PoolgateGatewayProps } from "../constructs/gateway-service.js";

export interface ServiceStackProps extends StackProps {
  vpc: ec2.IVpc;
  database: PoolgateDatabase;
  /** The repository root: the Dockerfile's directory and the functions' project root. */
  projectRoot: string;
  gateway?: Omit<PoolgateGatewayProps, "vpc" | "database" | "imageDirectory">;
}

export class PoolgateServiceStack extends Stack {
  readonly gateway: PoolgateGateway;
  readonly notesApi: CallerFunction | undefined;
  readonly health: FailoverHealth;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    this.gateway = new PoolgateGateway(this, "Gateway", { vpc: props.vpc, database: props.database, imageDirectory: props.projectRoot, ...props.gateway });
    // The example API is written in PostgreSQL's SQL (RETURNING, $n): deployed with that engine only.
    if (props.database.engine === "postgres") {
      this.notesApi = new CallerFunction(this, "NotesApi", {
        vpc: props.vpc,
        entry: `${props.projectRoot}/functions/notes-api/handler.ts`,
        projectRoot: props.projectRoot,
        serviceName: "notes-api",
      });
      this.gateway.grant(this.notesApi.function);
    }
    this.health = new FailoverHealth(this, "FailoverHealth", { vpc: props.vpc, gateway: this.gateway, database: props.database, projectRoot: props.projectRoot });
  }
}
