import { NotFound } from "../../errors.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { Frame, RunOutcome } from "../stream/broker.ts";
import { lastEventSeq, readEventLog } from "../stream/event-log.ts";
import { type JoinPoint, sseFrame, wanted, withHeartbeat } from "../stream/stream.ts";
import { threadState } from "../threads/state.ts";
import { executor } from "./executor.ts";
import { cancelRun, getRunItem, pollRunEnd } from "./runs.ts";

// Joining a run: its frames and its end, from the in-process broker when this process runs it (event-driven),
// else from the durable records (another process, or a run finished long ago).
const FINAL = ["success", "error", "timeout", "interrupted"];

/** The frames of a run from after `lastSeq` to its end; a closed client aborts `signal`. */
export async function* runFrames(
  d: AgentDeployment,
  threadId: string,
  runId: string,
  opts: JoinPoint & { signal?: AbortSignal } = {},
): AsyncGenerator<Frame> {
  const channel = executor().live(runId);
  if (channel) {
    // A retried run's earlier attempts streamed elsewhere (or before a crash): their frames come from the log.
    let last = opts.live ? channel.lastSeq : (opts.lastSeq ?? 0);
    if (last < channel.numberedAfter)
      for (const f of await readEventLog(d.scope, runId, last)) {
        if (f.seq > channel.numberedAfter) break;
        last = f.seq;
        yield f;
      }
    yield* channel.follow(last, opts.signal);
    return;
  }
  // Not running here: replay the durable log (a cross-process live tail would poll it the same way). A run's
  // last frames are stored with its final status, so one more read after seeing that status gets them.
  let last = opts.live ? await lastEventSeq(d.scope, runId) : (opts.lastSeq ?? 0);
  for (let ended = false; !opts.signal?.aborted; ) {
    for (const f of await readEventLog(d.scope, runId, last)) {
      last = f.seq;
      yield f;
    }
    if (ended) return;
    const run = await getRunItem(d, threadId, runId);
    ended = !run || FINAL.includes(run.status);
    if (!ended) await new Promise((r) => setTimeout(r, 200));
  }
}

/** The SSE text of a run from after `lastSeq` to its end, filtered by a join's stream modes. */
export async function* runSse(
  d: AgentDeployment,
  threadId: string,
  runId: string,
  opts: JoinPoint & { modes?: string[]; signal?: AbortSignal } = {},
): AsyncGenerator<string> {
  async function* frames() {
    for await (const f of runFrames(d, threadId, runId, opts))
      if (wanted(f.event, opts.modes)) yield sseFrame(f);
  }
  yield* withHeartbeat(frames());
}

/** Waits for a run to end and answers its final values (the thread's values when it ended elsewhere). */
export async function waitRun(d: AgentDeployment, threadId: string, runId: string): Promise<unknown> {
  const channel = executor().live(runId);
  let outcome: RunOutcome | undefined;
  if (channel) outcome = await channel.wait();
  else {
    const run = await pollRunEnd(d, threadId, runId);
    if (!run) throw new NotFound(`Run ${runId} not found`);
    // A worker elsewhere leaves the final values on the run record (when they fit).
    if (run.final_values !== undefined) outcome = { status: run.status, values: run.final_values };
  }
  if (outcome?.status === "deleted") throw new NotFound(`Run ${runId} was rolled back`);
  if (outcome?.values !== undefined) return outcome.values;
  return (await threadState(d, threadId)).values;
}

/** Cancels a run whose streaming client went away, when the run asked for that. */
export async function onClientGone(
  d: AgentDeployment,
  threadId: string,
  runId: string,
  force = false,
): Promise<void> {
  const run = await getRunItem(d, threadId, runId);
  if (run && (force || run.kwargs?.on_disconnect === "cancel") && ["pending", "running"].includes(run.status))
    await cancelRun(d, run, "interrupt");
}
