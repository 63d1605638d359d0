/**
 * What the CDK tests share: building the app in memory into a temporary directory (removed at exit),
 * and reading the gateway's configuration and logical ids out of a synthesised template.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CfnElement, Stack } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { buildPoolgateApp, type PoolgateApp } from "./lib/app.js";

export const projectRoot = fileURLToPath(new URL("..", import.meta.url));

const outdirs: string[] = [];

/** Builds the app with these context values (and a fixed migration run id), not yet synthesised. */
export function build(context: Record<string, string> = {}): PoolgateApp {
  const outdir = mkdtempSync(join(tmpdir(), "poolgate-cdk-"));
  outdirs.push(outdir);
  return buildPoolgateApp({ projectRoot, context: { migrationRunId: "test-run", ...context }, outdir });
}

/**
 * Builds the app for template assertions only: no asset is bundled (the functions' code is not
 * built), which saves most of a synth's time. Not for tests that read an asset's contents.
 */
export function buildTemplates(context: Record<string, string> = {}): PoolgateApp {
  const outdir = mkdtempSync(join(tmpdir(), "poolgate-cdk-"));
  outdirs.push(outdir);
  return buildPoolgateApp({ projectRoot, context: { migrationRunId: "test-run", ...context }, outdir, bundlingStacks: [] });
}

/** Removes what `build` wrote (call from afterAll). */
export function removeBuilds(): void {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The CloudFormation logical id of a construct's main resource. */
export function logicalIdOf(stack: Stack, construct: IConstruct): string {
  return stack.resolve((construct.node.defaultChild as CfnElement).logicalId) as string;
}

/** The gateway container's environment variables. */
export function containerEnvironment(template: Template): { Name: string; Value: unknown }[] {
  const task = Object.values(template.findResources("AWS::ECS::TaskDefinition"))[0] as { Properties: { ContainerDefinitions: { Environment?: { Name: string; Value: unknown }[] }[] } } | undefined;
  return task?.Properties.ContainerDefinitions[0]?.Environment ?? [];
}

function configParts(template: Template): unknown[] {
  const value = containerEnvironment(template).find((variable) => variable.Name === "POOLGATE_CONFIG_JSON")?.Value as { "Fn::Join": [string, unknown[]] };
  return value["Fn::Join"][1];
}

/** POOLGATE_CONFIG_JSON with each CloudFormation reference replaced by a placeholder string. */
export function configJson(template: Template): string {
  return configParts(template)
    .map((part) => (typeof part === "string" ? part : "REF"))
    .join("");
}

/** The host an Aurora DSQL cluster's reference stands for (its PrivateLink or its public endpoint). */
const DSQL_HOST_REFERENCE = /DatabaseCluster\w+?(VpcEndpointServiceName|Endpoint(?!Address))/;

/** POOLGATE_CONFIG_JSON with each reference replaced by a plausible value of its kind: a role ARN, a secret's ARN, a host. */
export function fillReferences(template: Template): string {
  return configParts(template)
    .map((part, i) => {
      if (typeof part === "string") return part;
      const reference = JSON.stringify(part);
      if (DSQL_HOST_REFERENCE.test(reference)) return "abcdefghijklmnopqrstuvwxyz.dsql-fnh4.us-east-1.on.aws";
      if (/Role/.test(reference)) return `arn:aws:iam::123456789012:role/caller${i}`;
      if (/Secret|Token/.test(reference)) return "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf";
      return `db${i}.cluster-abc123.us-east-1.rds.amazonaws.com`;
    })
    .join("");
}
