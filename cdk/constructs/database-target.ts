/**
 * What the rest of the stack needs from the database, whatever it is: an Aurora cluster with the
 * gateway's password logins (aurora-target.ts) or an Aurora DSQL cluster with IAM-mapped roles
 * (dsql-cluster.ts). The database stack picks one (the only place that looks at the engine); the
 * gateway, the migrations and the health checks use it through these interfaces, so each engine's
 * differences — endpoints, credentials, network path, connection limit, failover signals — live in
 * its own file.
 */
import type { aws_ec2 as ec2, aws_iam as iam, aws_lambda as lambda } from "aws-cdk-lib";
import type { Construct, IConstruct, IDependable } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import type { Migration } from "../../functions/migrate/migration-files.js";
import type { DatabaseEngine } from "./pool-budget.js";

/** The SQL dialect callers write (the canary's upsert): DSQL speaks PostgreSQL's. */
export type SqlDialect = "postgres" | "mysql";

/** What the gateway's task brings to the database. */
export interface GatewayTask {
  /** The task role (the identity DSQL maps to database roles; the reader of the Aurora logins' secrets). */
  taskRole: iam.IRole;
  securityGroup: ec2.ISecurityGroup;
}

/** The gateway's view of the database. */
export interface GatewayDatabase {
  readonly engine: DatabaseEngine;
  readonly dialect: SqlDialect;
  /** Aurora's instance class (the connection budget's limit); undefined for DSQL. */
  readonly instanceClass: string | undefined;
  /** The notes API's SQL and table exist for this database (the example API is deployed). */
  readonly hasNotesTable: boolean;
  /**
   * The role the gateway's tasks must run as, when the database has to know it in advance (DSQL's
   * `AWS IAM GRANT`, made by the migrations); undefined lets the task definition create its own.
   */
  gatewayTaskRole(scope: Construct): iam.IRole | undefined;
  /** The gateway configuration's `clusters.<name>` entry. */
  clusterConfig(options: { readOnlyLogin: boolean }): Record<string, unknown>;
  /** Lets the task log in (secrets, IAM) and reach the database (security groups); resources go into `scope`. */
  admitGateway(scope: Construct, task: GatewayTask, options: { readOnlyLogin: boolean }): void;
  /** The Aurora cluster whose topology events and metrics the health checks watch; undefined for DSQL (no failover to follow). */
  readonly topology: { database: PoolgateDatabase; readers: number } | undefined;
}

/** The schema migrations' view of the database. */
export interface MigrationTarget {
  readonly engine: DatabaseEngine;
  /** The custom resource's connection properties (Engine, Host, Port, Database and the engine's own). */
  migrationProperties(): Record<string, string>;
  /** Refuses, at synth, migration files the engine cannot run (DSQL: DDL alone in its file). */
  checkMigrations(migrations: readonly Migration[]): void;
  /** Lets the migration function log in as the administrator and reach the database. */
  admitMigrations(fn: lambda.Function): void;
  /** What must exist before the migrations run (the cluster, its instances). */
  readonly migrationPrerequisites: IConstruct[];
  /** Orders what must wait for the migrations (the logins' rotations) after `migrations`. */
  afterMigrations(migrations: IDependable): void;
}

/** Both views, and what the stacks and the cdk-nag acknowledgements read. */
export interface PoolgateDatabaseTarget extends GatewayDatabase, MigrationTarget {
  readonly deletionProtection: boolean;
  /** The cluster's identifier (an output). */
  readonly clusterIdentifier: string;
}
