/**
 * The shared result cache (issue 38): `-c cache=valkey` provisions ElastiCache Serverless for Valkey
 * for the gateway, from the templates (no bundling): the cache in the data subnets behind a security
 * group that admits the gateway's tasks alone, on the primary endpoint's port; RBAC with a user of
 * the gateway's own whose password is generated in Secrets Manager and never in the template; the
 * gateway's configuration pointed at it, accepted by the gateway's own loader with the password the
 * task gets as an ECS secret; cdk-nag passes on the synth. Without the setting: no cache resources, the in-process cache.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../gateway/config/load.js";
import { VALKEY_ACCESS_STRING, VALKEY_PORT } from "./constructs/valkey-result-cache.js";
import type { PoolgateApp } from "./lib/app.js";
import { buildTemplates, configJson, fillReferences, logicalIdOf, removeBuilds } from "./test-support.js";

let valkey: PoolgateApp;
let service: Template;

beforeAll(() => {
  valkey = buildTemplates({ cache: "valkey" });
  // Synthesises the whole app first: cdk-nag runs as a validation plugin and throws on a finding.
  valkey.app.synth();
  service = Template.fromStack(valkey.service);
}, 300000);

afterAll(removeBuilds);

const ref = (logicalId: string) => ({ Ref: logicalId });
const groupId = (logicalId: string) => ({ "Fn::GetAtt": [logicalId, "GroupId"] });

describe("-c cache=valkey", () => {
  it("provisions ElastiCache Serverless for Valkey in the data subnets, behind a group of its own, with RBAC", () => {
    const cache = valkey.service.gateway.resultCache;
    if (cache === undefined) throw new Error("no result cache with -c cache=valkey");
    const cacheGroup = logicalIdOf(valkey.service, cache.securityGroup);
    const [userGroup] = Object.values(service.findResources("AWS::ElastiCache::UserGroup"));
    service.resourceCountIs("AWS::ElastiCache::ServerlessCache", 1);
    service.hasResourceProperties("AWS::ElastiCache::ServerlessCache", {
      Engine: "valkey",
      MajorEngineVersion: "8",
      SecurityGroupIds: [groupId(cacheGroup)],
      UserGroupId: userGroup?.Properties.UserGroupId,
      SubnetIds: Match.arrayWith([Match.objectLike({ "Fn::GetStackOutput": Match.anyValue() })]),
    });
    const [serverless] = Object.values(service.findResources("AWS::ElastiCache::ServerlessCache"));
    expect(JSON.stringify(serverless?.Properties.SubnetIds)).toMatch(/dataSubnet/);
    expect(JSON.stringify(serverless?.Properties.SubnetIds)).not.toMatch(/appSubnet|publicSubnet/);

    // One user, the gateway's: a password (from Secrets Manager, by a dynamic reference) and the least access.
    service.resourceCountIs("AWS::ElastiCache::User", 1);
    const [user] = Object.values(service.findResources("AWS::ElastiCache::User"));
    expect(user?.Properties).toMatchObject({ Engine: "valkey", UserName: "poolgate", AccessString: VALKEY_ACCESS_STRING, AuthenticationMode: { Type: "password" } });
    const passwords = JSON.stringify(user?.Properties.AuthenticationMode.Passwords);
    expect(passwords).toContain("{{resolve:secretsmanager:");
    expect(passwords).toContain(logicalIdOf(valkey.service, cache.password));
    expect(VALKEY_ACCESS_STRING).toMatch(/^on ~poolgate:\* -@all .* -@dangerous \+info$/);
    service.hasResourceProperties("AWS::ElastiCache::UserGroup", { Engine: "valkey", UserIds: [Match.anyValue()] });
  });

  it("admits the gateway's tasks, and nothing else, on the primary endpoint's port", () => {
    const cache = valkey.service.gateway.resultCache;
    if (cache === undefined) throw new Error("no result cache with -c cache=valkey");
    const cacheGroup = logicalIdOf(valkey.service, cache.securityGroup);
    const [taskGroup] = valkey.service.gateway.service.connections.securityGroups;
    if (taskGroup === undefined) throw new Error("the gateway service has no security group");
    const ingress = Object.values(service.findResources("AWS::EC2::SecurityGroupIngress")).filter((rule) => JSON.stringify(rule.Properties.GroupId) === JSON.stringify(groupId(cacheGroup)));
    expect(ingress.map((rule) => rule.Properties)).toEqual([
      expect.objectContaining({ IpProtocol: "tcp", FromPort: VALKEY_PORT, ToPort: VALKEY_PORT, SourceSecurityGroupId: groupId(logicalIdOf(valkey.service, taskGroup)) }),
    ]);
    expect(VALKEY_PORT).toBe(6379);
    // The cache's group opens no connection of its own.
    service.hasResourceProperties("AWS::EC2::SecurityGroup", {
      GroupDescription: Match.stringLikeRegexp("result cache"),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: "255.255.255.255/32" })],
    });
  });

  it("points the gateway's configuration at it, with the password as an ECS secret the gateway's loader fills in", () => {
    const cache = valkey.service.gateway.resultCache;
    if (cache === undefined) throw new Error("no result cache with -c cache=valkey");
    const config = JSON.parse(configJson(service)) as { cache?: { store: string; valkey: { url: string; keyPrefix: string } } };
    expect(config.cache).toEqual({ store: "valkey", valkey: { url: "rediss://poolgate@REF:6379", keyPrefix: "poolgate" } });

    const [task] = Object.values(service.findResources("AWS::ECS::TaskDefinition"));
    const secrets = task?.Properties.ContainerDefinitions[0].Secrets as { Name: string; ValueFrom: unknown }[];
    expect(secrets.map((secret) => secret.Name).sort()).toEqual(["POOLGATE_PEER_KEY", "POOLGATE_VALKEY_PASSWORD"]);
    expect(secrets.find((secret) => secret.Name === "POOLGATE_VALKEY_PASSWORD")?.ValueFrom).toEqual(ref(logicalIdOf(valkey.service, cache.password)));

    const loaded = loadConfig({ POOLGATE_CONFIG_JSON: fillReferences(service), POOLGATE_VALKEY_PASSWORD: "generatedPassword0123456789" });
    expect(loaded.cache.store).toBe("valkey");
    expect(loaded.cache.valkey?.url).toMatch(/^rediss:\/\/poolgate:generatedPassword0123456789@[\w.-]+:6379$/);
  });
});

describe("without -c cache", () => {
  it("provisions no cache and leaves the gateway on its in-process cache; an unknown value stops synth", () => {
    const memory = buildTemplates();
    const template = Template.fromStack(memory.service);
    template.resourceCountIs("AWS::ElastiCache::ServerlessCache", 0);
    template.resourceCountIs("AWS::ElastiCache::User", 0);
    expect(memory.service.gateway.resultCache).toBeUndefined();
    expect(JSON.parse(configJson(template)).cache).toBeUndefined();
    expect(() => buildTemplates({ cache: "redis" })).toThrow(/context cache must be "memory" or "valkey", not "redis"/);
  });
});
