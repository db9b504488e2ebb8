import { config } from "../config.ts";
import { EXPORT_ERRORS } from "../errors.ts";

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
