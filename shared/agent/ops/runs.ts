import { authorize } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { graphFor } from "../runs/assistant.ts";
import { cancelRuns, type RunsCancel } from "../runs/bulk.ts";
import type { CancelAction } from "../runs/executor.ts";
import { onClientGone, runSse, waitRun } from "../runs/join.ts";
import {
  cancelRunById,
  createRun,
  deleteRun,
  getRun,
  listRuns,
  type Run,
  type RunCreate,
} from "../runs/runs.ts";
import { drainThread } from "../runs/worker.ts";
import { keepAliveJson, WAIT_HEADERS } from "../stream/keep-alive.ts";
import { joinPoint, streamHeaders } from "../stream/stream.ts";
import { type Caller, mustBeCallers, type OpsContext } from "./caller.ts";
import { runAccess, threadAccess } from "./checks.ts";

// Runs: every way a run starts goes through `startRun` (the reference's createValidRun): the caller's access to
// the thread (custom auth's threads:create_run), the multitask strategy against the thread's active runs, the
// record, the kick. The run handlers, MCP's tools/call, A2A's message/send and stream, and bulk runs call it;
// nothing else creates a run on a request's behalf (a cron's tick stores its run with its creator's identity).

/** A response body the handler streams, with its headers and what to do when the client leaves. */
export interface Streamed {
  body: AsyncIterable<string>;
  headers: Record<string, string>;
  onClose?: () => void;
}

/**
 * Creates a run for `caller` on the deployment `d` (`threadId` null: a stateless run on a temporary thread):
 * authorization, multitask strategy, storage and the kick, in that order.
 */
export async function startRun(
  s: OpsContext,
  caller: Caller,
  d: AgentDeployment,
  threadId: string | null,
  body: RunCreate,
): Promise<Run> {
  const authorized = await authorizeRun(s, caller, d, threadId, body);
  return authorized();
}

/** The first half of `startRun`: the caller may create the run; answers the creation to do. */
async function authorizeRun(
  s: OpsContext,
  caller: Caller,
  d: AgentDeployment,
  threadId: string | null,
  body: RunCreate,
): Promise<() => Promise<Run>> {
  mustBeCallers(caller, d);
  const { threadMetadata } = await runAccess(d, threadId, body);
  return () => createRun(d, threadId, body, s.kick, { threadMetadata });
}

const location = (run: Run, stateless: boolean) =>
  stateless ? `/runs/${run.run_id}` : `/threads/${run.thread_id}/runs/${run.run_id}`;

/** A background run (answers at once, pending): the run and where it is. */
export async function create(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string | null,
  body: RunCreate,
) {
  const d = await s.deployment(caller, deploymentId);
  const run = await startRun(s, caller, d, threadId, body);
  return { run, location: location(run, threadId === null) };
}

/** A run whose answer is its final values (newlines until then: keep-alive.ts). */
export async function createAndWait(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string | null,
  body: RunCreate,
): Promise<Streamed> {
  const d = await s.deployment(caller, deploymentId);
  const run = await startRun(s, caller, d, threadId, body);
  return {
    body: keepAliveJson(waitRun(d, run.thread_id, run.run_id)),
    headers: { ...WAIT_HEADERS, "content-location": location(run, threadId === null) },
  };
}

/** A run streamed as SSE; a client that leaves cancels it if it asked so (on_disconnect). */
export async function createAndStream(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string | null,
  body: RunCreate,
): Promise<Streamed> {
  const d = await s.deployment(caller, deploymentId);
  const run = await startRun(s, caller, d, threadId, body);
  const gone = new AbortController();
  return {
    body: runSse(d, run.thread_id, run.run_id, { signal: gone.signal }),
    headers: streamHeaders(threadId, run.run_id),
    onClose: () => {
      gone.abort();
      void onClientGone(d, run.thread_id, run.run_id);
    },
  };
}

/**
 * Several stateless background runs, answered in the order given. Each is authorized as a run of its own, and
 * every assistant is resolved first, so a refused run or an unknown assistant creates no run at all.
 */
export async function createBatch(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  bodies: RunCreate[],
): Promise<Run[]> {
  const d = await s.deployment(caller, deploymentId);
  const creations: (() => Promise<Run>)[] = [];
  for (const body of bodies) creations.push(await authorizeRun(s, caller, d, null, body));
  await Promise.all([...new Set(bodies.map((b) => b.assistant_id))].map((a) => graphFor(d, a)));
  return Promise.all(creations.map((create) => create()));
}

export async function get(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  runId: string,
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return getRun(d, threadId, runId);
}

export async function list(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  query: Parameters<typeof listRuns>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return listRuns(d, threadId, query);
}

export async function remove(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  runId: string,
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "delete", { run_id: runId });
  await deleteRun(d, threadId, runId);
}

/** Waits for a run and answers its final values (newlines until then). */
export async function join(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  runId: string,
): Promise<Streamed> {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  await getRun(d, threadId, runId);
  return { body: keepAliveJson(waitRun(d, threadId, runId)), headers: { ...WAIT_HEADERS } };
}

/** Joins a run's stream from the event after `lastEventId` (a non-resumable run's: from now on). */
export async function joinStream(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  runId: string,
  opts: { modes: string[]; lastEventId: string | undefined; cancelOnDisconnect: boolean },
): Promise<Streamed> {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  const run = await getRun(d, threadId, runId);
  const from = joinPoint(run, opts.lastEventId);
  const gone = new AbortController();
  return {
    body: runSse(d, run.thread_id, run.run_id, { ...from, modes: opts.modes, signal: gone.signal }),
    headers: streamHeaders(run.thread_id, run.run_id),
    onClose: () => {
      gone.abort();
      if (opts.cancelOnDisconnect) void onClientGone(d, run.thread_id, run.run_id, true);
    },
  };
}

export async function cancel(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  runId: string,
  action: CancelAction,
  wait: boolean,
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "update", { action });
  await cancelRunById(d, threadId, runId, action, wait);
}

/** Cancels a thread's, listed or all active runs (custom auth: of the threads the caller may update). */
export async function cancelMany(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  filter: Omit<RunsCancel, "auth">,
  action: "interrupt" | "rollback",
  wait: boolean,
) {
  const d = await s.deployment(caller, deploymentId);
  const auth = await authorize("threads:update", { thread_id: filter.thread_id, action });
  await cancelRuns(d, { ...filter, auth }, action, wait);
}

/** Executes the thread's due runs in this runtime until `deadline` (a drain: AWS's asynchronous invocation). */
export const drain = (
  _s: OpsContext,
  d: AgentDeployment,
  threadId: string,
  deadline: number,
): Promise<void> => drainThread(d, threadId, deadline);
