// Settings of run execution (where runs execute: executor.ts).

/**
 * How long a claimed run stays owned by its worker without a renewal. A worker renews at a third of it; a run
 * whose lease ran out is taken back by the sweeper (pending again, attempt + 1).
 */

/** How often a remote worker looks for a cancellation of its run (the issue asks for under a second). */
export const CANCEL_POLL_MS = 400;

/** Attempts before a run whose workers keep dying is failed. */
export const MAX_RUN_ATTEMPTS = 3;

/** The sparse GSI1 partition of active (pending or running) runs, which the sweeper reads. */

/** Names this process's claims on runs (`worker` on a running run): a crashed runtime's runs are retried at once. */
let workerId: string = crypto.randomUUID();
export const currentWorkerId = () => workerId;
export function setWorkerId(id: string): void {
  workerId = id;
}
