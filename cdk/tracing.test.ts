/**
 * `-c tracing=true` (issue 39, docs/tracing.md): the gateway's task gains an ADOT collector sidecar
 * exporting to X-Ray, the task role may write to X-Ray, the gateway starts after the collector, and the
 * gateway's own parser reads tracing on, exporting to the sidecar on loopback. Without the flag none of
 * that is there.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../gateway/config/load.js";
import { ADOT_COLLECTOR_IMAGE, COLLECTOR_CONTAINER, COLLECTOR_TRACES_URL } from "./constructs/trace-collector.js";
import { STACK_SAMPLE_RATIO } from "./constructs/gateway-config.js";
import type { PoolgateApp } from "./lib/app.js";
import { buildTemplates, configJson, fillReferences, removeBuilds } from "./test-support.js";

interface ContainerDefinition {
  Name: string;
  Image: unknown;
  Command?: string[];
  Essential?: boolean;
  DependsOn?: { ContainerName: string; Condition: string }[];
}

let traced: PoolgateApp;
let service: Template;

beforeAll(() => {
  traced = buildTemplates({ tracing: "true" });
  // Synthesises the whole app first: cdk-nag runs as a validation plugin and throws on a finding.
  traced.app.synth();
  service = Template.fromStack(traced.service);
}, 300000);

afterAll(removeBuilds);

function containers(template: Template): ContainerDefinition[] {
  const [task] = Object.values(template.findResources("AWS::ECS::TaskDefinition"));
  return task?.Properties.ContainerDefinitions as ContainerDefinition[];
}

describe("-c tracing=true", () => {
  it("runs an ADOT collector beside the gateway with its X-Ray pipeline, and starts the gateway after it", () => {
    const all = containers(service);
    const collector = all.find((container) => container.Name === COLLECTOR_CONTAINER);
    expect(collector).toMatchObject({ Image: ADOT_COLLECTOR_IMAGE, Command: ["--config=/etc/ecs/ecs-xray.yaml"], Essential: true });
    const gateway = all.find((container) => container.Name === "gateway");
    expect(gateway?.DependsOn).toEqual([{ ContainerName: COLLECTOR_CONTAINER, Condition: "START" }]);
  });

  it("lets the task role write traces to X-Ray", () => {
    service.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules"]), Effect: "Allow", Resource: "*" })]),
      },
    });
  });

  it("configures the gateway's tracing toward the sidecar, as the gateway's own parser reads it", () => {
    const config = parseConfig(JSON.parse(fillReferences(service)), "the stack's POOLGATE_CONFIG_JSON");
    expect(config.tracing).toMatchObject({ enabled: true, endpoint: COLLECTOR_TRACES_URL, sampleRatio: STACK_SAMPLE_RATIO, statementText: false, sqlComments: false });
  });
});

describe("without -c tracing", () => {
  it("adds no collector and leaves tracing off; a value other than true or false stops synth", () => {
    const plain = Template.fromStack(buildTemplates().service);
    expect(containers(plain).map((container) => container.Name)).toEqual(["gateway"]);
    expect(JSON.parse(configJson(plain)).tracing).toBeUndefined();
    expect(() => buildTemplates({ tracing: "yes" })).toThrow(/context tracing must be true or false, not "yes"/);
  });
});
