/**
 * The gateway's own database logins, so that it never logs in as the Aurora master user: one for
 * read-write principals (DML on the application's tables, no DDL) and one for read-only principals
 * (SELECT only). Each has a generated secret in the RDS format, attached to the cluster (host, port,
 * engine, dbname), and single-user rotation: the login changes its own password, and the gateway reads
 * the secret again (AWSPENDING first, mid-rotation) when the database refuses it.
 *
 * The logins themselves (CREATE ROLE / CREATE USER and the GRANTs) are made by the schema migrations
 * (schema-migrations.ts), which run as the master user; the rotations are scheduled only after the
 * migrations, since a rotation's first run must find the login.
 */
import { Duration, RemovalPolicy, aws_ec2 as ec2, aws_rds as rds, aws_secretsmanager as secretsmanager } from "aws-cdk-lib";
import { Construct, type IDependable } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";

/** What a login may do. */
export type LoginAccess = "read-write" | "read-only";

export interface DatabaseLoginsProps {
  vpc: ec2.IVpc;
  database: PoolgateDatabase;
  /** Login names (default poolgate_rw and poolgate_ro). */
  readWriteUsername?: string;
  readOnlyUsername?: string;
  /** How often the logins' passwords are rotated (default 30 days). */
  rotationInterval?: Duration;
}

/** One login: its secret and the rotation that changes its password. */
export interface DatabaseLogin {
  readonly access: LoginAccess;
  readonly username: string;
  /** The secret attached to the cluster ({"username", "password", "host", "port", "engine", "dbname"}). */
  readonly secret: secretsmanager.ISecret;
  readonly rotation: secretsmanager.SecretRotation;
}

/** Characters the generated passwords avoid: quoting in SQL, URLs and shells. */
const EXCLUDED_CHARACTERS = " %+~`#$&*()|[]{}:;<>?!'/@\"\\";

export class DatabaseLogins extends Construct {
  readonly readWrite: DatabaseLogin;
  readonly readOnly: DatabaseLogin;

  constructor(scope: Construct, id: string, props: DatabaseLoginsProps) {
    super(scope, id);
    const application =
      props.database.engine === "postgres"
        ? secretsmanager.SecretRotationApplication.POSTGRES_ROTATION_SINGLE_USER
        : secretsmanager.SecretRotationApplication.MYSQL_ROTATION_SINGLE_USER;
    const login = (name: string, access: LoginAccess, username: string): DatabaseLogin => {
      const secret = new rds.DatabaseSecret(this, `${name}Secret`, {
        username,
        dbname: props.database.databaseName,
        excludeCharacters: EXCLUDED_CHARACTERS,
      }).attach(props.database.cluster);
      // The rotation function logs in as the login itself (single user) and needs the Secrets Manager API.
      const rotation = new secretsmanager.SecretRotation(this, `${name}Rotation`, {
        application,
        secret,
        target: props.database.cluster,
        vpc: props.vpc,
        vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        automaticallyAfter: props.rotationInterval ?? Duration.days(30),
        excludeCharacters: EXCLUDED_CHARACTERS,
      });
      return { access, username, secret, rotation };
    };
    this.readWrite = login("ReadWrite", "read-write", props.readWriteUsername ?? "poolgate_rw");
    this.readOnly = login("ReadOnly", "read-only", props.readOnlyUsername ?? "poolgate_ro");
  }

  /** Both logins. */
  get all(): DatabaseLogin[] {
    return [this.readWrite, this.readOnly];
  }

  /** Keeps the logins' secrets when the stack is destroyed (with a retained cluster, see aurora-cluster.ts). */
  retainWithCluster(): void {
    for (const secret of this.node.findAll().filter((child) => child instanceof secretsmanager.CfnSecret)) secret.applyRemovalPolicy(RemovalPolicy.RETAIN);
  }

  /** Schedules the logins' rotations after `creator` (the migrations that create the logins). */
  rotateAfter(creator: IDependable): void {
    // Only the schedules (children of the secrets): the rotation functions' security groups must stay
    // free of the dependency, since the cluster's ingress rules, which the migrations wait for, name them.
    for (const schedule of this.node.findAll().filter((child) => child instanceof secretsmanager.CfnRotationSchedule)) schedule.node.addDependency(creator);
  }
}
