import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack, Token } from "aws-cdk-lib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONSOLE_FILES } from "./console-stack.ts";
import { buildApp } from "./index.ts";
import { ROOT } from "./node-function.ts";
import { EXTRA_REGIONS_CONTEXT, REGION_CONTEXT, STREAMING_REGIONS } from "./regions.ts";

// Issue 26: the agent API needs Lambda response streaming, which not every Region has; a synth for a known Region
// outside the supported list fails saying why and what to do, an env-agnostic synth is not checked.
const context = {
  ...JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context,
  "aws:cdk:bundling-stacks": [],
};
const consoleDir = mkdtempSync(join(tmpdir(), "console-"));
for (const f of CONSOLE_FILES) writeFileSync(join(consoleDir, f), "");

/** A small app (no tasks, no routes) built for `region`, with extra context. */
function build(region: string | undefined, extra: Record<string, unknown> = {}) {
  const app = new App({ context: { ...context, ...extra }, outdir: mkdtempSync(join(tmpdir(), "cdk-")) });
  return buildApp(app, {
    tasks: [],
    routes: [],
    stateMachineDir: join(tmpdir(), "no-such-dir"),
    consoleDir,
    env: region ? { region } : undefined,
  });
}

// The CDK CLI sets CDK_DEFAULT_REGION for the app; each test sets it or not.
const cliRegion = process.env.CDK_DEFAULT_REGION;
beforeEach(() => {
  delete process.env.CDK_DEFAULT_REGION;
});
afterEach(() => {
  if (cliRegion === undefined) delete process.env.CDK_DEFAULT_REGION;
  else process.env.CDK_DEFAULT_REGION = cliRegion;
});

describe("the synth-time Region check", () => {
  it("builds the stacks in a supported Region", () => {
    expect(STREAMING_REGIONS).toContain("eu-west-1");
    const stacks = build("eu-west-1");
    expect(Stack.of(stacks.api).region).toBe("eu-west-1");
  });

  it("fails a Region outside the list, saying why and how to add it", () => {
    expect(() => build("ap-south-2")).toThrow(
      /Region ap-south-2 .*Lambda response streaming.*Deploy to one of us-east-1, .*-c agent-platform:extra-regions=ap-south-2/,
    );
  });

  it("takes the Region the CDK CLI resolved (CDK_DEFAULT_REGION) or the context's when the stacks have none", () => {
    process.env.CDK_DEFAULT_REGION = "il-central-1";
    expect(() => build(undefined)).toThrow(/Region il-central-1 is not one/);
    process.env.CDK_DEFAULT_REGION = "us-east-2";
    expect(() => build(undefined)).not.toThrow();
    delete process.env.CDK_DEFAULT_REGION;
    expect(() => build(undefined, { [REGION_CONTEXT]: "ap-south-2" })).toThrow(
      /Region ap-south-2 is not one/,
    );
  });

  it("accepts the operator's extra Regions from context, and refuses a malformed list", () => {
    expect(() => build("ap-south-2", { [EXTRA_REGIONS_CONTEXT]: "ap-south-2, il-central-1" })).not.toThrow();
    expect(() => build("il-central-1", { [EXTRA_REGIONS_CONTEXT]: ["il-central-1"] })).not.toThrow();
    expect(() => build("ap-south-2", { [EXTRA_REGIONS_CONTEXT]: "south" })).toThrow(
      /agent-platform:extra-regions must be Region names/,
    );
  });

  it("does not check an env-agnostic synth", () => {
    const stacks = build(undefined);
    expect(Token.isUnresolved(Stack.of(stacks.data).region)).toBe(true);
  });
});
