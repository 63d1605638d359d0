import { describe, expect, it } from "vitest";
import { normalizePrincipalKey, principalOfArn } from "./principal-arn.js";

describe("principalOfArn", () => {
  it.each([
    ["arn:aws:sts::123456789012:assumed-role/app-role/i-0abc1234", "arn:aws:iam::123456789012:role/app-role"],
    ["arn:aws:sts::123456789012:assumed-role/my-fn-role-AbC123/my-fn", "arn:aws:iam::123456789012:role/my-fn-role-AbC123"],
    ["arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Admin_0123abcd/jane@example.com", "arn:aws:iam::123456789012:role/AWSReservedSSO_Admin_0123abcd"],
    ["arn:aws-cn:sts::123456789012:assumed-role/r/s1", "arn:aws-cn:iam::123456789012:role/r"],
    ["arn:aws-us-gov:sts::123456789012:assumed-role/r/s1", "arn:aws-us-gov:iam::123456789012:role/r"],
    ["arn:aws:iam::123456789012:role/app-role", "arn:aws:iam::123456789012:role/app-role"],
    ["arn:aws:iam::123456789012:role/service-role/app-role", "arn:aws:iam::123456789012:role/app-role"],
    ["arn:aws:iam::123456789012:role/a/b/c/app-role", "arn:aws:iam::123456789012:role/app-role"],
    ["arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/alice"],
    ["arn:aws:iam::123456789012:user/division/team/alice", "arn:aws:iam::123456789012:user/alice"],
    ["arn:aws:iam::123456789012:root", "arn:aws:iam::123456789012:root"],
    ["arn:aws:sts::123456789012:federated-user/bob", "arn:aws:sts::123456789012:federated-user/bob"],
  ])("maps %s to %s", (arn, principal) => {
    expect(principalOfArn(arn)).toBe(principal);
  });

  it.each([
    ["another partition", "arn:aws-iso:sts::123456789012:assumed-role/r/s"],
    ["a short account id", "arn:aws:sts::12345678901:assumed-role/r/s"],
    ["an assumed role without a session", "arn:aws:sts::123456789012:assumed-role/r"],
    ["an assumed role with a path", "arn:aws:sts::123456789012:assumed-role/p/r/s"],
    ["a group", "arn:aws:iam::123456789012:group/admins"],
    ["a region in an IAM ARN", "arn:aws:iam:us-east-1:123456789012:role/r"],
    ["a role without a name", "arn:aws:iam::123456789012:role/"],
    ["trailing text", "arn:aws:iam::123456789012:root/x"],
    ["a service ARN", "arn:aws:lambda:us-east-1:123456789012:function:f"],
    ["no ARN at all", "app-role"],
  ])("refuses %s", (_what, arn) => {
    expect(() => principalOfArn(arn)).toThrow(/is not an IAM role, user, assumed-role, root or federated-user ARN/);
  });
});

describe("normalizePrincipalKey", () => {
  it.each([
    ["arn:aws:iam::123456789012:role/service-role/app-role", "arn:aws:iam::123456789012:role/app-role"],
    ["arn:aws:sts::123456789012:assumed-role/app-role/session", "arn:aws:iam::123456789012:role/app-role"],
    ["reporting-job", "reporting-job"],
    ["*", "*"],
  ])("normalises %s to %s", (key, normalised) => {
    expect(normalizePrincipalKey(key)).toBe(normalised);
  });

  it("refuses an ARN key it cannot normalise, so a typo fails at start-up", () => {
    expect(() => normalizePrincipalKey("arn:aws:iam::123456789012:rol/app-role")).toThrow(/not an IAM/);
  });
});
