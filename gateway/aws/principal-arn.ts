/**
 * The principal an IAM identity is granted by. STS reports an assumed role as
 * `arn:aws:sts::<account>:assumed-role/<role>/<session>`, with a session name that changes from one
 * Lambda execution environment to the next and no role path; grants name the role
 * (`arn:aws:iam::<account>:role/<name>`, perhaps with a path). Both sides are reduced to the same key:
 *
 * - assumed role -> `arn:<partition>:iam::<account>:role/<name>` (session dropped)
 * - role or user with a path -> the path is dropped (`role/<name>`, `user/<name>`): names are unique
 *   within an account whatever the path, and assumed-role ARNs never carry the path, so a config key
 *   written with the path must still match
 * - `arn:<partition>:iam::<account>:root` and `arn:<partition>:sts::<account>:federated-user/<name>` kept
 *
 * Case is kept: ARNs compare case-sensitively, and STS reports names as they were created.
 */

const PARTITION = "(aws|aws-cn|aws-us-gov)";
const ACCOUNT = "(\\d{12})";
/** IAM names: role, user and session names share this character set. */
const NAME = "([\\w+=,.@-]{1,64})";
/** An IAM path: `/` or `/segment/.../` of printable ASCII. */
const PATH = "(?:/[\\x21-\\x7e]{0,510}?)?/";

const SHAPES: readonly { pattern: RegExp; principal: (match: RegExpMatchArray) => string }[] = [
  {
    pattern: new RegExp(`^arn:${PARTITION}:sts::${ACCOUNT}:assumed-role/${NAME}/${NAME}$`),
    principal: ([, partition, account, role]) => `arn:${partition}:iam::${account}:role/${role}`,
  },
  {
    pattern: new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:(role|user)${PATH}${NAME}$`),
    principal: ([, partition, account, kind, name]) => `arn:${partition}:iam::${account}:${kind}/${name}`,
  },
  {
    pattern: new RegExp(`^arn:${PARTITION}:iam::${ACCOUNT}:root$`),
    principal: ([arn]) => arn,
  },
  {
    pattern: new RegExp(`^arn:${PARTITION}:sts::${ACCOUNT}:federated-user/${NAME}$`),
    principal: ([arn]) => arn,
  },
];

/**
 * The principal key of an IAM ARN (see the module comment). Throws an Error naming the ARN when it is
 * not a role, user, assumed-role, root or federated-user ARN of the aws, aws-cn or aws-us-gov partition.
 */
export function principalOfArn(arn: string): string {
  for (const shape of SHAPES) {
    const match = arn.match(shape.pattern);
    if (match) return shape.principal(match);
  }
  throw new Error(`${JSON.stringify(arn.slice(0, 300))} is not an IAM role, user, assumed-role, root or federated-user ARN`);
}

/**
 * A grant key from the config, made comparable with principalOfArn's result: an ARN is normalised the
 * same way (and an unsupported ARN throws, so a mistyped key fails at start-up instead of never
 * matching); anything else — a bearer token's name, "*" — is returned unchanged.
 */
export function normalizePrincipalKey(key: string): string {
  return key.startsWith("arn:") ? principalOfArn(key) : key;
}
