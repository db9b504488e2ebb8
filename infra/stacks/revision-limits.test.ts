import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILD_URL_SECONDS } from "../../shared/control/build-exchange.ts";
import { DEFAULT_RESERVED_CONCURRENCY } from "./concurrency.ts";
import { ROOT } from "./node-function.ts";
import {
  BUILD_QUEUED_TIMEOUT_MINUTES,
  BUILD_TIMEOUT_MINUTES,
  FAN_OUT_BUILDS_AT_ONCE,
} from "./revision-build.ts";

// Issue 26: a build's time in CodeBuild's queue counts against the revision machine's Build state, and a push
// fan-out starts many builds and deploys at once. The machine's limits must hold what the project's allow.
const asl = JSON.parse(readFileSync(join(ROOT, "infra/state-machines/revision.asl.json"), "utf8"));
const retried = (r: any) => {
  let wait = 0;
  for (let n = 0; n < r.MaxAttempts; n++)
    wait += Math.min(r.MaxDelaySeconds ?? Number.POSITIVE_INFINITY, r.IntervalSeconds * r.BackoffRate ** n);
  return wait;
};

describe("the revision machine's limits", () => {
  it("give the Build state a build's queue time and run time together, within CodeBuild's 5–480 minutes", () => {
    expect(BUILD_QUEUED_TIMEOUT_MINUTES).toBeGreaterThanOrEqual(5);
    expect(asl.States.Build.TimeoutSeconds).toBeGreaterThanOrEqual(
      (BUILD_QUEUED_TIMEOUT_MINUTES + BUILD_TIMEOUT_MINUTES) * 60,
    );
  });

  it("retry a build refused at the project's concurrency limit, with jitter, long enough for a push of 49", () => {
    const limit = asl.States.Build.Retry.find((r: any) =>
      r.ErrorEquals.includes("CodeBuild.AccountLimitExceededException"),
    );
    expect(limit.JitterStrategy).toBe("FULL");
    // 49 builds, FAN_OUT_BUILDS_AT_ONCE at a time, a few minutes each.
    expect(retried(limit)).toBeGreaterThan((49 / FAN_OUT_BUILDS_AT_ONCE) * 5 * 60);
  });

  it("are within the build's presigned URLs' life: a build that starts late can still send its artifact (issue 35)", () => {
    expect(BUILD_URL_SECONDS).toBeGreaterThanOrEqual(asl.TimeoutSeconds);
    // S3 refuses a SigV4 presigned URL valid for more than 7 days.
    expect(BUILD_URL_SECONDS).toBeLessThanOrEqual(7 * 24 * 3600);
  });

  it("outlast a revision that waits its turn for both a build and a deploy", () => {
    const build = asl.States.Build;
    const deploy = asl.States.Deploy;
    const throttled = deploy.Retry.find((r: any) =>
      r.ErrorEquals.includes("Lambda.TooManyRequestsException"),
    );
    const steps = ["Prepare", "BuildStart", "Build", "BuildFinish", "Deploy"];
    const run = steps.reduce((n, name) => n + asl.States[name].TimeoutSeconds, 0);
    expect(asl.TimeoutSeconds).toBeGreaterThanOrEqual(run + retried(build.Retry[0]) + retried(throttled));
    expect(DEFAULT_RESERVED_CONCURRENCY.deploy).toBeGreaterThan(0);
  });
});
