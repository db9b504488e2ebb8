// Where runs execute. Locally (the default) a run is an in-process task of the API's own process, and its
// streams and waiters are fed by the in-process broker. With AGENT_RUN_WORKER=lambda (set by the CDK app, and
// usable locally to exercise that path) a run is executed by the AgentRunWorker function, invoked
// asynchronously; API handlers then read the run's durable records (event log, run item) and cancellation
// reaches the worker through the run's `cancel_action` flag, which it polls.

/** Are runs executed by a separate worker function (AWS), rather than in this process? */
export const remoteWorkers = (): boolean => process.env.AGENT_RUN_WORKER === "lambda";

/**
 * How long a claimed run stays owned by its worker without a renewal. A worker renews at a third of it; a run
 * whose lease ran out is taken back by the sweeper (pending again, attempt + 1).
 */
export const runLeaseMs = (): number => Number(process.env.AGENT_RUN_LEASE_MS ?? 30_000);

/** How often a remote worker looks for a cancellation of its run (the issue asks for under a second). */
export const CANCEL_POLL_MS = 400;

/** Attempts before a run whose workers keep dying is failed. */
export const MAX_RUN_ATTEMPTS = 3;

/** The sparse GSI1 partition of active (pending or running) runs, which the sweeper reads. */
export const ACTIVE_RUNS_PK = "AGENT#ACTIVE_RUNS";

/** Names this process's claims on runs (`worker` on a running run): a crashed runtime's runs are retried at once. */
let workerId: string = crypto.randomUUID();
export const currentWorkerId = () => workerId;
export function setWorkerId(id: string): void {
  workerId = id;
}
