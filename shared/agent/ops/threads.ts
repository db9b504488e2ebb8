import { Conflict } from "../../errors.ts";
import { deleteThread, pruneThreads } from "../cleanup/threads.ts";
import { ACTIVE, threadRuns } from "../runs/runs.ts";
import type { ThreadStreamMode } from "../runs/schemas.ts";
import { threadSse } from "../runs/thread-stream.ts";
import { SSE_HEADERS } from "../stream/stream.ts";
import {
  applySupersteps,
  patchThreadState,
  threadHistory,
  threadState,
  updateThreadState,
} from "../threads/state.ts";
import {
  copyThread,
  countThreads,
  createThread,
  getThread,
  patchThread,
  searchThreads,
  type ThreadQuery,
} from "../threads/threads.ts";
import type { Caller, OpsContext } from "./caller.ts";
import { searchScope, threadAccess, threadCreateAccess } from "./checks.ts";
import type { Streamed } from "./runs.ts";

// Threads and their state: each operation looks the deployment up for the caller and asks the deployment's Auth
// (threads:create / read / update / delete / search) before it reads or writes.

type CreateBody = Parameters<typeof createThread>[1] & {
  metadata?: Record<string, unknown>;
  supersteps?: Parameters<typeof applySupersteps>[2];
};

/** Creates a thread (if_exists raise → 409, do_nothing → the existing one, if the caller may see it). */
export async function create(s: OpsContext, caller: Caller, deploymentId: string, body: CreateBody) {
  const d = await s.deployment(caller, deploymentId);
  const { supersteps } = body;
  const inScope = await threadCreateAccess(body);
  return inScope(
    await createThread(
      d,
      body,
      supersteps?.length ? (threadId) => applySupersteps(d, threadId, supersteps) : undefined,
    ),
  );
}

/** Threads the caller may see matching the query, and how many match in all. */
export async function search(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<ThreadQuery, "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  const auth = await searchScope("threads:search", body);
  return searchThreads(d, { ...body, auth });
}

export async function count(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<ThreadQuery, "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  return countThreads(d, { ...body, auth: await searchScope("threads:search", body) });
}

export async function get(s: OpsContext, caller: Caller, deploymentId: string, threadId: string) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return getThread(d, threadId);
}

export async function update(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  body: { metadata?: Record<string, unknown>; ttl?: number },
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "update", { metadata: body.metadata });
  return patchThread(d, threadId, body.metadata, body.ttl);
}

/** Cancels the thread's active runs, deletes runs and checkpoints. */
export async function remove(s: OpsContext, caller: Caller, deploymentId: string, threadId: string) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "delete");
  await deleteThread(d, threadId);
}

/** Deletes threads, or keeps only their latest checkpoint; each must be the caller's to delete. */
export async function prune(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadIds: string[],
  strategy: Parameters<typeof pruneThreads>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  for (const id of threadIds) await threadAccess(d, id, "delete");
  return pruneThreads(d, threadIds, strategy);
}

export async function copy(s: OpsContext, caller: Caller, deploymentId: string, threadId: string) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return copyThread(d, threadId);
}

/** The thread's state: the latest, or at a checkpoint. */
export async function state(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  opts: Parameters<typeof threadState>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return threadState(d, threadId, opts);
}

export async function history(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  opts: Parameters<typeof threadHistory>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  return threadHistory(d, threadId, opts);
}

/**
 * Updates the state as if `as_node` had written it. Not while a run is pending or running on the thread (409,
 * as the reference): that run would write over it.
 */
export async function updateState(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  body: Parameters<typeof updateThreadState>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "update");
  if ((await threadRuns(d, threadId, ACTIVE)).length)
    throw new Conflict(
      `Thread ${threadId} has a pending or running run: its state cannot be updated until the run ends`,
    );
  return updateThreadState(d, threadId, body);
}

/** Merges metadata into the latest checkpoint's. */
export async function patchState(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  metadata: Record<string, unknown>,
) {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "update", { metadata });
  await patchThreadState(d, threadId, metadata);
}

/** Every run of the thread as it happens (SSE), until the client leaves. */
export async function joinStream(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string,
  opts: { modes: ThreadStreamMode[]; lastEventId: string | undefined },
): Promise<Streamed> {
  const d = await s.deployment(caller, deploymentId);
  await threadAccess(d, threadId, "read");
  const { thread_id } = await getThread(d, threadId);
  const gone = new AbortController();
  return {
    body: threadSse(d, thread_id, { ...opts, signal: gone.signal }),
    headers: { ...SSE_HEADERS, location: `/threads/${thread_id}/stream` },
    onClose: () => gone.abort(),
  };
}
