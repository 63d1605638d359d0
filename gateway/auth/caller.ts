/** Who is calling: the identity an authentication method established for one request. */

export type AuthMethod = "iam" | "bearer" | "none";

export interface Caller {
  /**
   * The principal grants are looked up by: an IAM role's ARN with the session name stripped
   * (arn:aws:iam::<account>:role/<name>), an IAM user's ARN, a bearer token's name, or "anonymous".
   */
  readonly principal: string;
  readonly method: AuthMethod;
  /** The identity as STS reported it (an assumed-role ARN keeps its session name), for logs. */
  readonly arn?: string;
}

/** Every caller when no authentication is configured (the gateway then listens on loopback only). */
export const ANONYMOUS: Caller = Object.freeze({ principal: "anonymous", method: "none" });
