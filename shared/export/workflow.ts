import { config } from "../config.ts";
import { EXPORT_ERRORS } from "../errors.ts";
import type { ExportRecord } from "../records/export.ts";
import type { PartitionJob } from "./exporter.ts";

// What the export state machine (infra/state-machines/bulk-export.asl.json) and its tasks agree on: the lists of
// error names (EXPORT_ERRORS, shared/errors.ts) its Retry and Catch match, and the settings written into it where
// it says "${Name}".

/** A run that fails with one of these is not retried: the state machine's Retry skips them. */
export const FINAL_RUN_ERRORS: readonly string[] = [
  EXPORT_ERRORS.destination,
  EXPORT_ERRORS.timedOut,
  EXPORT_ERRORS.retriesExhausted,
];

/** An export stopped by one of these ended TimedOut: its own deadline, or the state machine's timeout. */
export const TIMEOUT_ERRORS: readonly string[] = [EXPORT_ERRORS.timedOut, "States.Timeout", "TIMED_OUT"];

/** When an export's whole-export timeout ends it (its runs then fail ExportTimedOut). */
export const exportDeadline = (exp: Pick<ExportRecord, "started_at" | "created_at">): number =>
  Date.parse(exp.started_at ?? exp.created_at) + config.export.timeoutSeconds * 1000;

/**
 * Throttled attempts of one partition chunk (ExportPartition at its reserved concurrency, the global cap): with
 * the retry's backoff (10 s doubling, at most 5 min, full jitter) a chunk waits up to about 40 minutes for a slot.
 */
export const EXPORT_THROTTLE_RETRIES = 12;

/** The values of the export state machine's "${Name}" settings (the same in AWS and on the local cloud). */
export const exportWorkflowSettings = (): Record<string, unknown> => ({
  ExportThrottleRetries: EXPORT_THROTTLE_RETRIES,
  ExportMaxRetries: config.export.maxRetries,
  ExportTimeoutSeconds: config.export.timeoutSeconds,
  ExportFinalRunErrors: FINAL_RUN_ERRORS,
});

/** Step Functions keeps at most 256 KB of an execution's state (input, each state's input and output). */
const STATE_BYTES = 256 * 1024;
/** What the state holds besides the plan's runs: ids, max_concurrency, a failure's Cause (≤ 32 KB), finalize's result. */
const STATE_RESERVE_BYTES = 64 * 1024;
const DAY_MS = 86_400_000;

/** The UTC days an export of [start, end) plans, one run (Map item) each — as planExport counts them. */
export const exportDays = (start: string, end: string): number =>
  Math.max(0, Math.ceil((Date.parse(end) - Date.parse(start.slice(0, 10))) / DAY_MS));

/** The most days one export may span so that its plan (one PartitionJob per day) fits the state. */
export function maxExportDays(tenant: string): number {
  const id = "00000000-0000-0000-0000-000000000000";
  const job: PartitionJob = { tenant_id: tenant, export_id: id, run_id: id };
  const perRun = Buffer.byteLength(`${JSON.stringify(job)},`);
  return Math.floor((STATE_BYTES - STATE_RESERVE_BYTES) / perRun);
}

/** How many runs (days) the export state machine's Map processes at once: its plan's max_concurrency. */
export const runConcurrency = (): number => Math.max(1, config.export.maxConcurrentRuns);

/**
 * What bounds the export state machine's worst case, from config (infra/quotas reads it to count history events):
 * the Map's items (the most days any workspace may plan: an empty workspace id leaves the most room), the
 * concurrency its path resolves to, and how often a run's chunk loop can go round.
 */
export function exportWorkflowBounds() {
  const runFailures = config.export.maxRetries + 1; // a run's attempts are counted on its record (retry_<n>)
  // A call that is not done used its whole chunk budget, or stopped at an attempt's end (the next call fails it).
  const calls = Math.ceil(config.export.timeoutSeconds / config.export.chunkSeconds) + runFailures + 1;
  // Every call may also be throttled, each entry's retrier counting afresh.
  const failedAttempts = runFailures + calls * EXPORT_THROTTLE_RETRIES;
  return {
    items: { "$.plan.runs": maxExportDays("") },
    maxConcurrency: { "$.plan.max_concurrency": runConcurrency() },
    states: {
      "Runs/ExportPartition": { entries: calls, failedAttempts },
      "Runs/RunDone": { entries: calls },
    },
  };
}
