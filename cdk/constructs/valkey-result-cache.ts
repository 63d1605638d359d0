/**
 * The result cache shared by every gateway task (`-c cache=valkey`, docs/cache.md): ElastiCache
 * Serverless for Valkey in the VPC's data subnets, reachable only from the security groups admitted
 * with `admit` (the gateway's tasks), on the primary endpoint's port. Serverless caches always speak
 * TLS, and RBAC is their only access control
 * (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/Clusters.RBAC.html): the gateway logs in as
 * its own Valkey user, whose generated password lives in Secrets Manager and reaches the task as an
 * ECS secret (POOLGATE_VALKEY_PASSWORD, filled into `cache.valkey.url` by the gateway's config loader),
 * and whose access string allows the gateway's keys and the commands its store sends, nothing else.
 */
import { Names, aws_ec2 as ec2, aws_elasticache as elasticache, aws_secretsmanager as secretsmanager } from "aws-cdk-lib";
import { Construct } from "constructs";

/**
 * The primary endpoint's port: reads and writes, always the latest data (6380 is the eventually
 * consistent reader endpoint, which the cache must not read from):
 * https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/ReadReplicas.html
 */
export const VALKEY_PORT = 6379;
/** The gateway's `cache.valkey.keyPrefix`: the user may touch these keys only. */
export const VALKEY_KEY_PREFIX = "poolgate";
/** The Valkey user the gateway logs in as. */
export const VALKEY_USER_NAME = "poolgate";
/**
 * Entries' GET/MGET/SET, generations' INCR in MULTI/EXEC (valkey-store.ts), and what the client
 * sends on connecting (AUTH, PING, INFO for ioredis's ready check); nothing that flushes, scans or
 * reconfigures. Rules apply left to right: INFO is in @dangerous, so it is added back after.
 */
export const VALKEY_ACCESS_STRING = `on ~${VALKEY_KEY_PREFIX}:* -@all +@read +@write +@transaction +@connection -@dangerous +info`;

export interface ValkeyResultCacheProps {
  vpc: ec2.IVpc;
  /** Valkey's major version (default "8"). */
  majorEngineVersion?: string;
}

export class ValkeyResultCache extends Construct {
  readonly cache: elasticache.CfnServerlessCache;
  readonly securityGroup: ec2.SecurityGroup;
  /** The gateway user's password (a plain SecretString). */
  readonly password: secretsmanager.Secret;
  /** `cache.valkey.url` without the password: `rediss://poolgate@<endpoint>:6379`. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ValkeyResultCacheProps) {
    super(scope, id);
    const name = (suffix: string) => Names.uniqueResourceName(this, { maxLength: 40 - suffix.length - 1, separator: "-" }).toLowerCase().replace(/-+/g, "-") + `-${suffix}`;
    this.securityGroup = new ec2.SecurityGroup(this, "SecurityGroup", {
      vpc: props.vpc,
      description: "Poolgate result cache (ElastiCache Serverless for Valkey), admits the gateway tasks only",
      allowAllOutbound: false,
    });
    this.password = new secretsmanager.Secret(this, "Password", {
      description: "Poolgate: the gateway's password for its result cache (ElastiCache Serverless for Valkey)",
      // ElastiCache passwords: 16 to 128 printable characters, some punctuation refused: letters and digits only.
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
    });
    const user = new elasticache.CfnUser(this, "User", {
      engine: "valkey",
      userId: name("user"),
      userName: VALKEY_USER_NAME,
      accessString: VALKEY_ACCESS_STRING,
      // A dynamic reference: CloudFormation resolves it at deploy time, the template never holds the password.
      authenticationMode: { Type: "password", Passwords: [this.password.secretValue.unsafeUnwrap()] },
    });
    const userGroup = new elasticache.CfnUserGroup(this, "UserGroup", { engine: "valkey", userGroupId: name("users"), userIds: [user.userId] });
    userGroup.node.addDependency(user);
    this.cache = new elasticache.CfnServerlessCache(this, "Cache", {
      engine: "valkey",
      majorEngineVersion: props.majorEngineVersion ?? "8",
      serverlessCacheName: name("cache"),
      description: "Poolgate: query results shared by the gateway tasks",
      securityGroupIds: [this.securityGroup.securityGroupId],
      subnetIds: props.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_ISOLATED }).subnetIds,
      userGroupId: userGroup.userGroupId,
    });
    this.cache.node.addDependency(userGroup);
    this.url = `rediss://${VALKEY_USER_NAME}@${this.cache.attrEndpointAddress}:${VALKEY_PORT}`;
  }

  /** Lets a security group (the gateway's tasks) reach the cache's primary endpoint. */
  admit(peer: ec2.ISecurityGroup, description: string): void {
    this.securityGroup.addIngressRule(peer, ec2.Port.tcp(VALKEY_PORT), description);
    peer.addEgressRule(this.securityGroup, ec2.Port.tcp(VALKEY_PORT), description);
  }
}
