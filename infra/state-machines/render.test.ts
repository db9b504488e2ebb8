import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { EXPORT_THROTTLE_RETRIES, FINAL_RUN_ERRORS } from "../../shared/export/workflow.ts";
import { renderAsl } from "./render.ts";

const exportAsl = () =>
  JSON.parse(renderAsl(readFileSync(new URL("./bulk-export.asl.json", import.meta.url), "utf8")));
const partitionRetry = (asl: any) => asl.States.Runs.ItemProcessor.States.ExportPartition.Retry;

describe("renderAsl", () => {
  afterEach(() => {
    delete process.env.EXPORT_MAX_RETRIES;
    delete process.env.EXPORT_TIMEOUT_SECONDS;
  });

  it("writes the export's settings into its state machine from config, not a second copy", () => {
    process.env.EXPORT_MAX_RETRIES = "35";
    process.env.EXPORT_TIMEOUT_SECONDS = "7200";
    const asl = exportAsl();
    expect(asl.TimeoutSeconds).toBe(7200);
    // A retry count above the old hard-coded 20 reaches the Retry that the exporter counts against.
    expect(partitionRetry(asl)).toEqual([
      { ErrorEquals: FINAL_RUN_ERRORS, MaxAttempts: 0 },
      // Issue 35: a throttle (ExportPartition at its reserved concurrency, the global cap) waits with jittered
      // backoff and is not one of the run's retries.
      {
        ErrorEquals: ["Lambda.TooManyRequestsException"],
        IntervalSeconds: 10,
        MaxAttempts: EXPORT_THROTTLE_RETRIES,
        BackoffRate: 2,
        MaxDelaySeconds: 300,
        JitterStrategy: "FULL",
      },
      { ErrorEquals: ["States.ALL"], IntervalSeconds: 30, MaxAttempts: 35, BackoffRate: 1 },
    ]);
  });

  it("leaves placeholders that are not settings (ARNs) and strings that merely contain one", () => {
    const text = '{"a":"${PlanFunctionArn}","b":"x ${ExportMaxRetries}","c":"${ExportMaxRetries}"}';
    expect(JSON.parse(renderAsl(text, { ExportMaxRetries: 3 }))).toEqual({
      a: "${PlanFunctionArn}",
      b: "x ${ExportMaxRetries}",
      c: 3,
    });
  });
});
