import { config } from "../../config.ts";
import { RunAborted, type RunAbortReason } from "../../errors.ts";
import { logger } from "../../log.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { askDrain } from "../runtime/drain-asks.ts";
import { controllers, findChannel, openChannel, type RunChannel } from "../stream/broker.ts";

// Where a deployment's runs execute — always inside that deployment's runtime, in one of two ways:
// - `process` (a local runtime, long-lived): in the runtime process that took the request. Streams follow the
//   in-process broker, waiters wake when the run ends, a cancel aborts the run directly, and a run on a free
//   thread starts in the same write that stores it.
// - `lambda` (AWS; AGENT_RUN_WORKER=lambda locally): in an asynchronous invocation of the runtime's function
//   that only the platform starts (drain-asks.ts: the request's answer asks the router, the run sweeper picks up
//   the rest). That invocation shares no memory with the request's: streams and waits read the durable event log
//   and run record, a cancel reaches the run through the record (the worker polls it), the final values are
//   left on the record, and traces and the webhook go out before the worker's invocation returns.

/** A user's cancel of a run (the rest of RunAborted's reasons, shared/errors.ts, are the platform's). */
export type CancelAction = Extract<RunAbortReason, "interrupt" | "rollback">;
/** The reason a run's AbortController was aborted with, if it was one of ours. */
export const abortReason = (signal: AbortSignal) =>
  signal.reason instanceof RunAborted ? signal.reason.reason : undefined;

export interface RunExecutor {
  /** Has the thread's next due run started: `here` starts it in this process; else the platform is asked to. */
  dispatch(d: AgentDeployment, threadId: string, here: () => void): Promise<void>;
  /** Can a run stored already running (its thread was free) execute here at once? */
  readonly startsClaimedRuns: boolean;
  /** The live channel of a run executing in this process, which streams and waits follow. */
  live(runId: string): RunChannel | undefined;
  /** Opens a new run's live channel (only where runs execute in this process). */
  open(runId: string): void;
  /** Stops a run executing in this process; elsewhere the worker sees its record's cancel flag. */
  abort(runId: string, reason: CancelAction): void;
  /** Does the worker poll its run's record for cancels? */
  readonly pollsCancel: boolean;
  /** Is everything a run sends out (final values on its record, traces, webhook) done before its worker returns? */
  readonly settlesBeforeReturn: boolean;
}

const inProcess: RunExecutor = {
  dispatch: async (_d, _threadId, here) => here(),
  startsClaimedRuns: true,
  live: findChannel,
  open: (runId) => void openChannel(runId),
  abort: (runId, reason) => controllers.get(runId)?.abort(new RunAborted(reason)),
  pollsCancel: false,
  settlesBeforeReturn: false,
};

const functionInvocations: RunExecutor = {
  dispatch: async (_d, threadId) => {
    // Outside a request's answer the run sweeper starts it (its next sweep: within a minute in AWS).
    if (!askDrain(threadId)) logger.warn("a run's drain is left to the run sweeper", { thread_id: threadId });
  },
  startsClaimedRuns: false,
  live: () => undefined,
  open: () => {},
  abort: () => {},
  pollsCancel: true,
  settlesBeforeReturn: true,
};

/** The executor of this runtime (its setting does not change while it runs). */
export const executor = (): RunExecutor =>
  config.agent.runWorker === "lambda" ? functionInvocations : inProcess;
