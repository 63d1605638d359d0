/**
 * Aurora DSQL authentication tokens (`{"source": "dsql"}`): the password of every new session is a
 * token @aws-sdk/dsql-signer presigns with the task's AWS credentials for the cluster endpoint
 * (SigV4, service "dsql", action DbConnectAdmin for the `admin` role, DbConnect for custom roles).
 * DSQL checks the token only while the session logs in ("the connection remains valid even if the
 * authentication token expires": Aurora DSQL User Guide, SECTION_authentication-token.html), so the
 * caching and refresh of RDS IAM tokens fit as they are: IamTokenCredentials holds them, with a
 * validity that is the one the signer is asked for.
 */
import { DsqlSigner, type DsqlSignerConfig } from "@aws-sdk/dsql-signer";
import type { SessionTarget } from "./database-credentials.js";
import { IamTokenCredentials, type IamTokenCredentialsOptions, type TokenMinter } from "./iam-token-credentials.js";

/** The role DSQL creates in every cluster; its tokens are signed for DbConnectAdmin. */
export const DSQL_ADMIN_ROLE = "admin";

/**
 * How long a token is valid. The SDK's default (900 s; the service accepts up to 604,800): a token is
 * only read at login and signing is local, so a short one costs nothing and limits what a leaked
 * token is worth.
 */
export const DSQL_TOKEN_VALIDITY_SECONDS = 900;

/**
 * Signs with @aws-sdk/dsql-signer. A DSQL token names the host and the action, not the port or the
 * role: the role is the session's user, and DSQL checks that the signing IAM identity may be it.
 */
export function dsqlSignerMinter(region: string, credentials: DsqlSignerConfig["credentials"]): TokenMinter {
  return (target: SessionTarget, user: string) => {
    const signer = new DsqlSigner({ hostname: target.host, region, credentials, expiresIn: DSQL_TOKEN_VALIDITY_SECONDS });
    return user === DSQL_ADMIN_ROLE ? signer.getDbConnectAdminAuthToken() : signer.getDbConnectAuthToken();
  };
}

/** The region in a DSQL cluster endpoint: <cluster id>.dsql.<region>.on.aws (as AWS's DSQL connectors read it). */
export function regionOfDsqlHost(host: string): string | undefined {
  return /\.dsql[^.]*\.([a-z]{2}(?:-[a-z]+)+-\d)\.on\.aws$/i.exec(host)?.[1]?.toLowerCase();
}

/** Tokens for `role` at the cluster endpoint, minted before new sessions and again before they expire. */
export function dsqlTokenCredentials(
  role: string,
  mint: TokenMinter,
  endpoint: SessionTarget,
  options: Omit<IamTokenCredentialsOptions, "validityMs"> = {},
): IamTokenCredentials {
  return new IamTokenCredentials(role, mint, endpoint, { ...options, validityMs: DSQL_TOKEN_VALIDITY_SECONDS * 1000 });
}
