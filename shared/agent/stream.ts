import { NotFound } from "../errors.ts";
import { type Frame, findChannel, type RunOutcome } from "./broker.ts";
import type { AgentDeployment } from "./context.ts";
import { readEventLog } from "./event-log.ts";
import { cancelRun, getRunItem } from "./runs.ts";
import { threadState } from "./state.ts";

// Serving a run's frames as SSE and waiting for a run's end, from the in-process broker when this process
// runs it (event-driven), else from the durable records (another process, or a run finished long ago).
const FINAL = ["success", "error", "timeout", "interrupted"];

export function sseFrame(f: Frame): string {
  return `event: ${f.event}\ndata: ${JSON.stringify(f.data ?? null)}\nid: ${f.seq}\n\n`;
}

/** Does a frame pass a join's stream_mode filter (metadata, error and end always do)? */
function wanted(event: string, modes?: string[]): boolean {
  if (!modes?.length || ["metadata", "error", "end"].includes(event)) return true;
  return modes.includes(event.split("|")[0]);
}

/** The SSE text of a run from after `lastSeq` to its end; a closed client aborts `signal`. */
export async function* runSse(
  d: AgentDeployment,
  threadId: string,
  runId: string,
  opts: { lastSeq?: number; modes?: string[]; signal?: AbortSignal } = {},
): AsyncGenerator<string> {
  const channel = findChannel(runId);
  if (channel) {
    for await (const f of channel.follow(opts.lastSeq ?? 0, opts.signal))
      if (wanted(f.event, opts.modes)) yield sseFrame(f);
    return;
  }
  // Not running here: replay the durable log (a cross-process live tail would poll it the same way).
  for (let last = opts.lastSeq ?? 0; !opts.signal?.aborted; ) {
    for (const f of await readEventLog(d.scope, runId, last)) {
      last = f.seq;
      if (wanted(f.event, opts.modes)) yield sseFrame(f);
    }
    const run = await getRunItem(d, threadId, runId);
    if (!run || FINAL.includes(run.status)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits for a run to end and answers its final values (the thread's values when it ended elsewhere). */
export async function waitRun(d: AgentDeployment, threadId: string, runId: string): Promise<unknown> {
  const channel = findChannel(runId);
  let outcome: RunOutcome | undefined;
  if (channel) outcome = await channel.wait();
  else {
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      const run = await getRunItem(d, threadId, runId);
      if (!run) throw new NotFound(`Run ${runId} not found`);
      if (FINAL.includes(run.status)) break;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  if (outcome?.status === "deleted") throw new NotFound(`Run ${runId} was rolled back`);
  if (outcome?.values !== undefined) return outcome.values;
  return (await threadState(d, threadId)).values;
}

/** The response headers of a run stream: where the SDK reads the run id and reconnects. */
export function streamHeaders(threadId: string | null, runId: string): Record<string, string> {
  const location = threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
  return {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
    "content-location": location,
    ...(threadId ? { location: `${location}/stream` } : {}),
  };
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
