import { config } from "../config.ts";
import { EXPORT_ERRORS } from "../errors.ts";
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

/** The values of the export state machine's "${Name}" settings (the same in AWS and on the local cloud). */
export const exportWorkflowSettings = (): Record<string, unknown> => ({
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
