import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { tasks } from "../../functions/task-manifest.ts";
import { accountConcurrencyRow, concurrencyRow } from "../quotas/synth.ts";
import { API_GATEWAY_ACCOUNT_ROLE_CONTEXT } from "./agent-origin.ts";
import { TRACE_TASK } from "./agent-runtimes.ts";
import {
  ACCOUNT_CONCURRENCY,
  ACCOUNT_CONCURRENCY_CONTEXT,
  CONCURRENCY_CONTEXT,
  capacity,
  DEFAULT_RESERVED_CONCURRENCY,
  DEPLOY_TASK,
  deploymentCeiling,
  describeCapacity,
  MIN_UNRESERVED,
  NO_RESERVATIONS,
  RUNTIME_CONCURRENCY_CONTEXT,
  reservedConcurrency,
  reservedFor,
} from "./concurrency.ts";
import { CONSOLE_FILES } from "./console-stack.ts";
import { buildApp } from "./index.ts";
import { ROOT } from "./node-function.ts";
import { BUILD_CONCURRENCY_CONTEXT, buildConcurrency } from "./revision-build.ts";
import { synthesizedApp } from "./synthesized-app.ts";
import { ALARM_EMAIL_CONTEXT, alarmEmail } from "./workflows-stack.ts";

// Issue 26: a streamed run holds three concurrent executions for up to 15 minutes in one regional pool; the
// router, the sweepers and trace ingestion have concurrency of their own, which the operator may set.
const context = {
  ...JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context,
  "aws:cdk:bundling-stacks": [],
};
const consoleDir = mkdtempSync(join(tmpdir(), "console-"));
for (const f of CONSOLE_FILES) writeFileSync(join(consoleDir, f), "");

/** The operator's settings of the "set with cdk context" tests: one more synth, shared by them. */
const SETTINGS = {
  [CONCURRENCY_CONTEXT.router]: "300",
  [CONCURRENCY_CONTEXT.sweeper]: "0",
  [CONCURRENCY_CONTEXT.traceIngest]: "20",
  [CONCURRENCY_CONTEXT.deploy]: "2",
  [CONCURRENCY_CONTEXT.exportPartition]: "30",
  [RUNTIME_CONCURRENCY_CONTEXT]: "5",
  [BUILD_CONCURRENCY_CONTEXT]: "2",
  [ALARM_EMAIL_CONTEXT]: "ops@example.com",
  [API_GATEWAY_ACCOUNT_ROLE_CONTEXT]: "create",
};
let withSettings: App | undefined;
function settingsApp(): App {
  if (withSettings) return withSettings;
  withSettings = new App({
    context: { ...context, ...SETTINGS },
    outdir: mkdtempSync(join(tmpdir(), "cdk-")),
  });
  buildApp(withSettings, { consoleDir });
  return withSettings;
}
const stacksOf = (app: App) => app.node.findAll().filter((c): c is Stack => Stack.isStack(c));
/** Every resource of a type in the app's stacks (nested ones too). */
const resourcesOf = (app: App, type: string) =>
  stacksOf(app).flatMap((st) => Object.values(Template.fromStack(st).findResources(type)));

/** ReservedConcurrentExecutions of every function of the app, by its description's start. */
async function reservations(settings?: boolean): Promise<Map<string, number | undefined>> {
  const app = settings ? settingsApp() : (await synthesizedApp()).app;
  const out = new Map<string, number | undefined>();
  for (const stack of app.node.findAll().filter((c): c is Stack => Stack.isStack(c)))
    for (const f of Object.values(Template.fromStack(stack).findResources("AWS::Lambda::Function")))
      out.set(String(f.Properties.Description), f.Properties.ReservedConcurrentExecutions);
  return out;
}
const of = (r: Map<string, number | undefined>, start: string) =>
  [...r].filter(([d]) => d.startsWith(start)).map(([, n]) => n);

/** A bare app's node with these context values, for the settings' own checks. */
const node = (settings: Record<string, string>) => new App({ context: settings }).node;

const sweepers = tasks.filter((t) => t.onLocalStart).map((t) => t.name);

describe("reserved concurrency", () => {
  it("by default (no quota stated) nothing is reserved: a new account's first deploy needs no flags", async () => {
    const r = await reservations();
    expect(of(r, "Routes agent-server requests")).toEqual([undefined]);
    expect(sweepers.length).toBeGreaterThan(0);
    for (const name of sweepers) expect(of(r, `Task ${name} (`)).toEqual([undefined]);
    for (const task of [TRACE_TASK, DEPLOY_TASK, "ExportPartition"])
      expect(of(r, `Task ${task} (`)).toEqual([undefined]);
    expect([...r.values()].every((n) => n === undefined)).toBe(true);
  }, 180_000);

  it("a stated quota that holds them reserves the defaults: the router, each sweeper, trace ingestion, deploys, export partitions", () => {
    const quota = (n: number) => node({ [ACCOUNT_CONCURRENCY_CONTEXT]: String(n) });
    expect(reservedConcurrency(quota(1000), tasks)).toEqual(DEFAULT_RESERVED_CONCURRENCY);
    const c = capacity(quota(1000), tasks);
    // Issue 35: export partitions have a global cap, the function's reservation (was: unreserved).
    expect(reservedFor(tasks.find((t) => t.name === "ExportPartition")!, c.reserved)).toBe(
      DEFAULT_RESERVED_CONCURRENCY.exportPartition,
    );
    expect(c.platform + MIN_UNRESERVED).toBeLessThanOrEqual(1000);
    // One short of the defaults and the 100 unreserved: none reserved, not a synth error.
    expect(reservedConcurrency(quota(c.platform + MIN_UNRESERVED - 1), tasks)).toEqual(NO_RESERVATIONS);
    expect(reservedConcurrency(quota(c.platform + MIN_UNRESERVED), tasks)).toEqual(
      DEFAULT_RESERVED_CONCURRENCY,
    );
  });

  // A push fan-out (up to 49 deploys) meets Lambda's control-plane rate limit: deploys run a few at a time, and
  // the revision machine's Deploy state waits out the throttle of the others, long enough for all of them.
  it("deploys a few revisions at once; the others wait in Deploy's retry, with jitter, for minutes", () => {
    const asl = JSON.parse(readFileSync(join(ROOT, "infra/state-machines/revision.asl.json"), "utf8"));
    const throttled = asl.States.Deploy.Retry.find((r: any) =>
      r.ErrorEquals.includes("Lambda.TooManyRequestsException"),
    );
    expect(throttled.JitterStrategy).toBe("FULL");
    let wait = 0;
    for (let n = 0; n < throttled.MaxAttempts; n++)
      wait += Math.min(throttled.MaxDelaySeconds, throttled.IntervalSeconds * throttled.BackoffRate ** n);
    // 49 deploys, `deploy` at a time, a few minutes each: the last waits about 49 / 4 × 1 min.
    expect(wait).toBeGreaterThan((49 / DEFAULT_RESERVED_CONCURRENCY.deploy) * 60);
    expect(DEFAULT_RESERVED_CONCURRENCY.deploy).toBeLessThanOrEqual(5);
  });

  it("the operator sets them with cdk context; 0 reserves none", async () => {
    const r = await reservations(true);
    expect(of(r, "Routes agent-server requests")).toEqual([300]);
    for (const name of sweepers) expect(of(r, `Task ${name} (`)).toEqual([undefined]);
    expect(of(r, `Task ${TRACE_TASK} (`)).toEqual([20]);
    expect(of(r, `Task ${DEPLOY_TASK} (`)).toEqual([2]);
    expect(of(r, "Task ExportPartition (")).toEqual([30]);
  }, 180_000);

  it("refuses at synth what is no count, and a sum that leaves an account's default less than 100 unreserved", () => {
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.router]: "-1" }), tasks)).toThrow(
      /routerReservedConcurrency must be a whole number/,
    );
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.sweeper]: "1.5" }), tasks)).toThrow(
      /sweeperReservedConcurrency/,
    );
    const tooMany = String(ACCOUNT_CONCURRENCY - MIN_UNRESERVED + 1);
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.router]: tooMany }), tasks)).toThrow(
      /keep 100 unreserved/,
    );
    expect(reservedConcurrency(node({}), tasks)).toEqual(NO_RESERVATIONS);
  });
});

// Issue 35: a new account's concurrency quota (10 or 50) keeps all of it unreserved, so a fixed reservation per
// runtime fails every deploy there; the operator chooses one, and synth prints what the quota then holds.
describe("each deployment's runtime concurrency", () => {
  const deployEnv = (app: App) => {
    const fn = resourcesOf(app, "AWS::Lambda::Function").find((f) =>
      String(f.Properties.Description).startsWith(`Task ${DEPLOY_TASK} (`),
    );
    return fn!.Properties.Environment.Variables as Record<string, unknown>;
  };

  it("is unset by default: the deploy step reserves none, and no ceiling comes from concurrency", async () => {
    const { app, stacks } = await synthesizedApp();
    expect(deployEnv(app)).not.toHaveProperty("AGENT_RUNTIME_RESERVED_CONCURRENCY");
    expect(stacks.capacity.runtime).toBeUndefined();
    expect(deploymentCeiling(stacks.capacity)).toBeUndefined();
    expect(describeCapacity(stacks.capacity)).toMatch(
      /quota not stated .*nothing reserved: .*429 with Retry-After/,
    );
    // Only a runtime's throttle can be a 429: a throttled router never runs, and API Gateway answers 500.
    expect(describeCapacity(stacks.capacity)).toMatch(
      /throttled router or platform function: API Gateway's 500/,
    );
  }, 180_000);

  it("is the operator's context value, handed to the deploy step", () => {
    expect(deployEnv(settingsApp())).toMatchObject({ AGENT_RUNTIME_RESERVED_CONCURRENCY: "5" });
  }, 180_000);

  it("gives the deployment ceiling: (quota − platform reserved − 100 unreserved) / per runtime", () => {
    const c = capacity(
      node({ [RUNTIME_CONCURRENCY_CONTEXT]: "5", [ACCOUNT_CONCURRENCY_CONTEXT]: "1000" }),
      tasks,
    );
    const platform = tasks.reduce((n, t) => n + (reservedFor(t, DEFAULT_RESERVED_CONCURRENCY) ?? 0), 200);
    expect(c.platform).toBe(platform);
    expect(deploymentCeiling(c)).toBe(Math.floor((1000 - platform - 100) / 5));
    expect(describeCapacity(c)).toContain(`at most ${deploymentCeiling(c)} deployments`);
    const raised = capacity(
      node({ [RUNTIME_CONCURRENCY_CONTEXT]: "10", [ACCOUNT_CONCURRENCY_CONTEXT]: "3000" }),
      tasks,
    );
    expect(deploymentCeiling(raised)).toBe(Math.floor((3000 - platform - 100) / 10));
  });

  it("is one of the preflight's quota checks: the reservations, one runtime's and 100 unreserved within the quota", () => {
    const c = capacity(
      node({ [RUNTIME_CONCURRENCY_CONTEXT]: "5", [ACCOUNT_CONCURRENCY_CONTEXT]: "1000" }),
      tasks,
    );
    expect(concurrencyRow(c)).toMatchObject({
      value: c.platform + 5 + MIN_UNRESERVED,
      limit: 1000,
      ok: true,
    });
  });

  it("on a new account (quota 10) synthesizes with nothing reserved; a reservation set there is refused", () => {
    const zero = Object.fromEntries(Object.values(CONCURRENCY_CONTEXT).map((k) => [k, "0"]));
    expect(capacity(node({ [ACCOUNT_CONCURRENCY_CONTEXT]: "10" }), tasks).platform).toBe(0);
    expect(() =>
      capacity(node({ [ACCOUNT_CONCURRENCY_CONTEXT]: "10", [CONCURRENCY_CONTEXT.router]: "1" }), tasks),
    ).toThrow(/must keep 100 unreserved.*-c routerReservedConcurrency=0/);
    const fresh = capacity(node({ ...zero, [ACCOUNT_CONCURRENCY_CONTEXT]: "10" }), tasks);
    expect(fresh.platform).toBe(0);
    expect(deploymentCeiling(fresh)).toBeUndefined();
    expect(() =>
      capacity(
        node({ ...zero, [ACCOUNT_CONCURRENCY_CONTEXT]: "10", [RUNTIME_CONCURRENCY_CONTEXT]: "1" }),
        tasks,
      ),
    ).toThrow(/room for no deployment/);
    expect(() => capacity(node({ [RUNTIME_CONCURRENCY_CONTEXT]: "0" }), tasks)).toThrow(
      /runtimeReservedConcurrency must be a whole number ≥ 1/,
    );
  });

  it("on a new account (quota 10) with nothing reserved, the preflight passes: no reservation, nothing to keep", () => {
    const zero = Object.fromEntries(Object.values(CONCURRENCY_CONTEXT).map((k) => [k, "0"]));
    const fresh = capacity(node({ ...zero, [ACCOUNT_CONCURRENCY_CONTEXT]: "10" }), tasks);
    expect(concurrencyRow(fresh)).toMatchObject({ value: 0, limit: 10, ok: true });
    expect(describeCapacity(fresh)).toMatch(/nothing reserved: .*shares the 10 executions/);
    expect(describeCapacity(fresh)).not.toMatch(/-\d/);
  });

  it("with credentials, the preflight holds the reservations to the account's own quota, as the deploy will", () => {
    const defaults = capacity(node({ [ACCOUNT_CONCURRENCY_CONTEXT]: "1000" }), tasks);
    // A stated 1000 reserves the defaults; CloudFormation holds them to the account's real quota (a new account's 10).
    expect(concurrencyRow(defaults).ok).toBe(true);
    expect(accountConcurrencyRow(defaults, 10)).toMatchObject({
      value: defaults.platform + MIN_UNRESERVED,
      limit: 10,
      ok: false,
    });
    expect(accountConcurrencyRow(defaults, 1000).ok).toBe(true);
    const zero = Object.fromEntries(Object.values(CONCURRENCY_CONTEXT).map((k) => [k, "0"]));
    expect(accountConcurrencyRow(capacity(node(zero), tasks), 10).ok).toBe(true);
  });
});

// Issue 35: the other capacity and operations settings are the operator's, unset by default.
describe("the operator's settings (cdk context)", () => {
  it("CodeBuild's project build limit: none by default (a new account's quota may be 0–1), the value when set", async () => {
    const limit = (app: App) =>
      resourcesOf(app, "AWS::CodeBuild::Project")[0]!.Properties.ConcurrentBuildLimit;
    expect(limit((await synthesizedApp()).app)).toBeUndefined();
    expect(limit(settingsApp())).toBe(2);
    expect(() => buildConcurrency(node({ [BUILD_CONCURRENCY_CONTEXT]: "0" }))).toThrow(
      /revisionBuildConcurrency/,
    );
  }, 180_000);

  it("alarms notify a topic the operator subscribes to; alarmEmail subscribes an address", async () => {
    for (const app of [(await synthesizedApp()).app, settingsApp()]) {
      const topics = resourcesOf(app, "AWS::SNS::Topic");
      expect(topics).toHaveLength(1);
      const alarms = resourcesOf(app, "AWS::CloudWatch::Alarm");
      expect(alarms.length).toBeGreaterThan(0);
      for (const a of alarms) expect(a.Properties.AlarmActions).toHaveLength(1);
    }
    expect(resourcesOf((await synthesizedApp()).app, "AWS::SNS::Subscription")).toEqual([]);
    expect(resourcesOf(settingsApp(), "AWS::SNS::Subscription")).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({ Protocol: "email", Endpoint: "ops@example.com" }),
      }),
    ]);
    expect(() => alarmEmail("not-an-address")).toThrow(/alarmEmail must be an email address/);
  }, 180_000);

  it("the account's API Gateway CloudWatch role is left to the operator unless apiGatewayAccountRole=create", async () => {
    expect(resourcesOf((await synthesizedApp()).app, "AWS::ApiGateway::Account")).toEqual([]);
    expect(resourcesOf(settingsApp(), "AWS::ApiGateway::Account")).toHaveLength(1);
  }, 180_000);
});
