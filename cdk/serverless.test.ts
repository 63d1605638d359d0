/**
 * `-c serverless=true -c minCapacity=0` (issue 35 §1): Serverless v2 instances that may pause, the
 * gateway's idleToZero on, and the canary no longer every minute (it would keep the database awake).
 * The default deployment keeps provisioned instances, warm pools and the minute canary.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../gateway/config/load.js";
import type { PoolgateApp } from "./lib/app.js";
import { buildTemplates, fillReferences, removeBuilds } from "./test-support.js";

let pausing: PoolgateApp;
let plain: PoolgateApp;

beforeAll(() => {
  pausing = buildTemplates({ serverless: "true", minCapacity: "0" });
  plain = buildTemplates();
}, 300000);

afterAll(removeBuilds);

const canaryRates = (app: PoolgateApp) =>
  Object.values(Template.fromStack(app.service).findResources("AWS::Events::Rule", { Properties: { Description: Match.stringLikeRegexp("canary") } })).map(
    (rule) => (rule as { Properties: { ScheduleExpression: string } }).Properties.ScheduleExpression,
  );

describe("a cluster that may pause", () => {
  it("has Serverless v2 instances with a minimum of 0 ACUs", () => {
    const database = Template.fromStack(pausing.database);
    database.hasResourceProperties("AWS::RDS::DBCluster", { ServerlessV2ScalingConfiguration: { MinCapacity: 0, MaxCapacity: 16 } });
    const classes = Object.values(database.findResources("AWS::RDS::DBInstance")).map((instance) => (instance as { Properties: { DBInstanceClass: string } }).Properties.DBInstanceClass);
    expect(classes.length).toBeGreaterThanOrEqual(2);
    expect(new Set(classes)).toEqual(new Set(["db.serverless"]));
  });

  it("turns the gateway's idleToZero on", () => {
    const config = parseConfig(JSON.parse(fillReferences(Template.fromStack(pausing.service))), "the stack's POOLGATE_CONFIG_JSON");
    expect(config.clusters.default?.idleToZero).toEqual({ quietMs: 60000, resumeTimeoutMs: 45000 });
  });

  it("runs the canary hourly, not every minute", () => {
    expect(canaryRates(pausing)).toEqual(["rate(1 hour)"]);
  });

  it("refuses capacities that are not ACUs", () => {
    expect(() => buildTemplates({ serverless: "true", minCapacity: "0.3" })).toThrow(/minCapacity must be ACUs/);
    expect(() => buildTemplates({ minCapacity: "0" })).toThrow(/serverless=true only/);
  });
});

describe("the default cluster", () => {
  it("keeps provisioned instances, warm pools and the minute canary", () => {
    Template.fromStack(plain.database).hasResourceProperties("AWS::RDS::DBCluster", { ServerlessV2ScalingConfiguration: Match.absent() });
    const config = parseConfig(JSON.parse(fillReferences(Template.fromStack(plain.service))), "the stack's POOLGATE_CONFIG_JSON");
    expect(config.clusters.default?.idleToZero).toBeUndefined();
    expect(canaryRates(plain)).toEqual(["rate(1 minute)"]);
  });
});
