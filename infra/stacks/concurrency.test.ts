import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { tasks } from "../../functions/task-manifest.ts";
import { TRACE_TASK } from "./agent-runtimes.ts";
import {
  ACCOUNT_CONCURRENCY,
  CONCURRENCY_CONTEXT,
  DEFAULT_RESERVED_CONCURRENCY,
  DEPLOY_TASK,
  MIN_UNRESERVED,
  reservedConcurrency,
} from "./concurrency.ts";
import { CONSOLE_FILES } from "./console-stack.ts";
import { buildApp } from "./index.ts";
import { ROOT } from "./node-function.ts";
import { synthesizedApp } from "./synthesized-app.ts";

// Issue 26: a streamed run holds three concurrent executions for up to 15 minutes in one regional pool; the
// router, the sweepers and trace ingestion have concurrency of their own, which the operator may set.
const context = {
  ...JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context,
  "aws:cdk:bundling-stacks": [],
};
const consoleDir = mkdtempSync(join(tmpdir(), "console-"));
for (const f of CONSOLE_FILES) writeFileSync(join(consoleDir, f), "");

/** ReservedConcurrentExecutions of every function of the app, by its description's start. */
async function reservations(settings?: Record<string, string>): Promise<Map<string, number | undefined>> {
  const app = settings
    ? new App({ context: { ...context, ...settings }, outdir: mkdtempSync(join(tmpdir(), "cdk-")) })
    : (await synthesizedApp()).app;
  if (settings) buildApp(app, { consoleDir });
  const out = new Map<string, number | undefined>();
  for (const stack of app.node.findAll().filter((c): c is Stack => Stack.isStack(c)))
    for (const f of Object.values(Template.fromStack(stack).findResources("AWS::Lambda::Function")))
      out.set(String(f.Properties.Description), f.Properties.ReservedConcurrentExecutions);
  return out;
}
const of = (r: Map<string, number | undefined>, start: string) =>
  [...r].filter(([d]) => d.startsWith(start)).map(([, n]) => n);

const sweepers = tasks.filter((t) => t.onLocalStart).map((t) => t.name);

describe("reserved concurrency", () => {
  it("the router, each sweeper and trace ingestion reserve theirs; other functions share the pool", async () => {
    const r = await reservations();
    expect(of(r, "Routes agent-server requests")).toEqual([DEFAULT_RESERVED_CONCURRENCY.router]);
    expect(sweepers.length).toBeGreaterThan(0);
    for (const name of sweepers)
      expect(of(r, `Task ${name} (`)).toEqual([DEFAULT_RESERVED_CONCURRENCY.sweeper]);
    expect(of(r, `Task ${TRACE_TASK} (`)).toEqual([DEFAULT_RESERVED_CONCURRENCY.traceIngest]);
    expect(of(r, `Task ${DEPLOY_TASK} (`)).toEqual([DEFAULT_RESERVED_CONCURRENCY.deploy]);
    expect(of(r, "Task ExportPartition (")).toEqual([undefined]);
  }, 180_000);

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
    const r = await reservations({
      [CONCURRENCY_CONTEXT.router]: "300",
      [CONCURRENCY_CONTEXT.sweeper]: "0",
      [CONCURRENCY_CONTEXT.traceIngest]: "20",
      [CONCURRENCY_CONTEXT.deploy]: "2",
    });
    expect(of(r, "Routes agent-server requests")).toEqual([300]);
    for (const name of sweepers) expect(of(r, `Task ${name} (`)).toEqual([undefined]);
    expect(of(r, `Task ${TRACE_TASK} (`)).toEqual([20]);
    expect(of(r, `Task ${DEPLOY_TASK} (`)).toEqual([2]);
  }, 180_000);

  it("refuses at synth what is no count, and a sum that leaves an account's default less than 100 unreserved", () => {
    const node = (settings: Record<string, string>) => new App({ context: settings }).node;
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.router]: "-1" }), tasks)).toThrow(
      /routerReservedConcurrency must be a whole number/,
    );
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.sweeper]: "1.5" }), tasks)).toThrow(
      /sweeperReservedConcurrency/,
    );
    const tooMany = String(ACCOUNT_CONCURRENCY - MIN_UNRESERVED);
    expect(() => reservedConcurrency(node({ [CONCURRENCY_CONTEXT.router]: tooMany }), tasks)).toThrow(
      /keep 100 unreserved/,
    );
    expect(reservedConcurrency(node({}), tasks)).toEqual(DEFAULT_RESERVED_CONCURRENCY);
  });
});
