/**
 * How a cluster's sessions prove who they are and protect the wire: its credentials source and TLS,
 * built once at start from `clusters.<name>.credentials` and `.tls`, and handed to the cluster's
 * engine, through which every session is opened (pool, topology monitor, discovery, MySQL KILL QUERY).
 */
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { ConfigError } from "../config/load.js";
import { normalizePrincipalKey } from "../aws/principal-arn.js";
import { isDsqlCluster } from "../config/dsql-rules.js";
import type { ClusterConfig, DatabaseLoginConfig } from "../config/schema.js";
import type { Logger } from "../logger.js";
import { type DatabaseCredentials, sessionTargetOf } from "./database-credentials.js";
import { dsqlSignerMinter, dsqlTokenCredentials, regionOfDsqlHost } from "./dsql-tokens.js";
import { IamTokenCredentials, rdsSignerMinter, regionOfRdsHost, type TokenMinter } from "./iam-token-credentials.js";
import { type LoginKey, principalLogin, READ_ONLY_LOGIN } from "./logins.js";
import { type SecretSource, SecretsManagerCredentials } from "./secrets-manager-credentials.js";
import { StaticCredentials } from "./static-credentials.js";
import { type DatabaseTls, loadDatabaseTls, urlTlsParameters } from "./tls-options.js";

export interface DatabaseAccess {
  /** Where sessions get their login; undefined: the URL's user and password. */
  credentials?: DatabaseCredentials | undefined;
  /** TLS for every session; undefined: as the URL says (PostgreSQL sslmode), else none. */
  tls?: DatabaseTls | undefined;
  /** The cluster's other logins (read-only, per principal), each with its credentials. */
  logins?: ReadonlyMap<LoginKey, DatabaseCredentials> | undefined;
  /**
   * What kind of PostgreSQL the cluster is, where it is not the community server or Aurora
   * PostgreSQL: "aurora-dsql", one always-writable endpoint without replication positions.
   */
  flavour?: "aurora-dsql" | undefined;
}

export interface DatabaseAccessDependencies {
  /** The gateway's one Secrets Manager reader. */
  secrets: SecretSource;
  logger: Logger;
  /** How IAM tokens are signed; default: @aws-sdk/rds-signer with the SDK's default credentials chain. */
  mintToken?: (region: string) => TokenMinter;
  /** How Aurora DSQL tokens are signed; default: @aws-sdk/dsql-signer with the SDK's default credentials chain. */
  mintDsqlToken?: (region: string) => TokenMinter;
}

/** A DSQL cluster without a `tls` setting still encrypts and checks the endpoint (Amazon Root CA 1 is in Node's store). */
const DSQL_DEFAULT_TLS = { mode: "verify-full" } as const;

function settingError(path: string, message: string): ConfigError {
  return new ConfigError(`invalid configuration:\n  - ${path}: ${message}`);
}

/** Reads the CA bundle and builds the credentials source; throws ConfigError for settings that cannot work. */
export function databaseAccessFor(name: string, cluster: ClusterConfig, dependencies: DatabaseAccessDependencies): DatabaseAccess {
  const where = `clusters.${name}`;
  const dsql = isDsqlCluster(cluster);
  const tls = loadDatabaseTls(cluster.tls ?? (dsql ? DSQL_DEFAULT_TLS : undefined), `${where}.tls`);
  if (tls !== undefined) {
    for (const url of [cluster.writerUrl, ...cluster.readerUrls]) {
      const parameters = urlTlsParameters(url);
      if (parameters.length > 0) {
        throw settingError(`${where}.tls`, `is set, and a URL also chooses TLS (${parameters.join(", ")}); remove those URL parameters so one setting decides`);
      }
    }
  }
  const credentials = cluster.credentials === undefined ? undefined : credentialsFor(`${where}.credentials`, cluster.credentials, cluster, dependencies);
  const logins = new Map<LoginKey, DatabaseCredentials>();
  const readOnly = cluster.logins?.readOnly;
  if (readOnly !== undefined) logins.set(READ_ONLY_LOGIN, credentialsFor(`${where}.logins.readOnly`, readOnly, cluster, dependencies));
  for (const [principal, login] of Object.entries(cluster.logins?.principals ?? {})) {
    const key = principalLogin(normalizePrincipalKey(principal));
    if (logins.has(key)) throw settingError(`${where}.logins.principals`, `lists ${principal} twice (role paths are not part of a principal)`);
    logins.set(key, credentialsFor(`${where}.logins.principals["${principal}"]`, login, cluster, dependencies));
  }
  const access: DatabaseAccess = logins.size === 0 ? { tls, credentials } : { tls, credentials, logins };
  return dsql ? { ...access, flavour: "aurora-dsql" } : access;
}

/** The credentials source a login names. */
function credentialsFor(where: string, config: DatabaseLoginConfig, cluster: ClusterConfig, dependencies: DatabaseAccessDependencies): DatabaseCredentials {
  if (config.source === "password") return new StaticCredentials(config.username, config.password);
  if (config.source === "secrets-manager") return new SecretsManagerCredentials(config.secretArn, dependencies.secrets, dependencies.logger);
  const writer = sessionTargetOf(cluster.writerUrl);
  if (config.source === "dsql") {
    const region = config.region ?? regionOfDsqlHost(writer.host);
    if (region === undefined) {
      throw settingError(`${where}.region`, `is needed: the writer host "${writer.host}" is not <cluster id>.dsql.<region>.on.aws`);
    }
    return dsqlTokenCredentials(config.username, dependencies.mintDsqlToken?.(region) ?? dsqlSignerMinter(region, defaultProvider()), writer);
  }
  const region = config.region ?? regionOfRdsHost(writer.host);
  if (region === undefined) {
    throw settingError(`${where}.region`, `is needed: the writer host "${writer.host}" is not *.<region>.rds.amazonaws.com`);
  }
  const mint = dependencies.mintToken?.(region) ?? rdsSignerMinter(region, defaultProvider());
  return new IamTokenCredentials(config.username, mint, writer);
}
