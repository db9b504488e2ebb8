// Settings of run execution (where runs execute: executor.ts).

/**
 * How long a claimed run stays owned by its worker without a renewal. A worker renews at a third of it; a run
 * whose lease ran out is taken back by the sweeper (pending again, attempt + 1).
 */

/** How often a remote worker looks for a cancellation of its run (the issue asks for under a second). */
export const CANCEL_POLL_MS = 400;

/**
 * The longest delay a run may ask for (after_seconds): one year. The reference server sets no bound; here one
 * keeps not_before a plain date (1e300 seconds would not be one) and a mistaken unit (ms for s) visible.
 */
export const MAX_AFTER_SECONDS = 365 * 24 * 3600;

/** Node fires a timer set beyond 2^31-1 ms (~24.8 days) at once, so a longer wait is a chain of these. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The timer for waking in `ms` (5 ms late, so the wait is surely over): at most MAX_TIMER_MS, then again. */
export const wakeTimerMs = (ms: number) => Math.min(Math.max(ms, 0) + 5, MAX_TIMER_MS);

/** Attempts before a run whose workers keep dying is failed. */
export const MAX_RUN_ATTEMPTS = 3;

/** The sparse GSI1 partition of active (pending or running) runs, which the sweeper reads. */

/** Names this process's claims on runs (`worker` on a running run): a crashed runtime's runs are retried at once. */
const PROCESS_WORKER = crypto.randomUUID();
/** The worker id of a deployment's claims: its runtime's (given at its start), else this process's own. */
export const workerOf = (d: { runtime?: { workerId: string } }): string =>
  d.runtime?.workerId ?? PROCESS_WORKER;
