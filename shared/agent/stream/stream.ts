import { NotFound } from "../../errors.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { executor } from "../runs/executor.ts";
import { cancelRun, getRunItem, pollRunEnd } from "../runs/runs.ts";
import { threadState } from "../threads/state.ts";
import type { Frame, RunOutcome } from "./broker.ts";
import { lastEventSeq, readEventLog, storesEvents } from "./event-log.ts";

// Serving a run's frames as SSE and waiting for a run's end, from the in-process broker when this process
// runs it (event-driven), else from the durable records (another process, or a run finished long ago).
const FINAL = ["success", "error", "timeout", "interrupted"];

/**
 * A frame's SSE id. The ids a client sees count a run's frames from 0, as the reference server's do (frames are
 * numbered from 1 inside, so "after frame 0" means from the start).
 */
export const eventId = (seq: number): number => seq - 1;

/**
 * The frame number after which a stream resumes, from the Last-Event-ID a client sends: after the event it
 * names; `-1` (what the SDK sends to replay from the start), none or an unreadable one replay every frame.
 */
export function resumeAfter(lastEventId: string | undefined): number {
  const n = Number(lastEventId);
  return lastEventId && Number.isSafeInteger(n) && n >= 0 ? n + 1 : 0;
}

export function sseFrame(f: Frame, id: number | string = eventId(f.seq)): string {
  return `event: ${f.event}\ndata: ${JSON.stringify(f.data ?? null)}\nid: ${id}\n\n`;
}

/** Does a frame pass a join's stream_mode filter (metadata, error and end always do)? */
function wanted(event: string, modes?: string[]): boolean {
  if (!modes?.length || ["metadata", "error", "end"].includes(event)) return true;
  // "messages/partial|ns" belongs to mode messages; a "messages" tuple frame to messages-tuple.
  const base = event.split("|")[0];
  if (base === "messages") return modes.includes("messages-tuple") || modes.includes("messages");
  return modes.includes(base.split("/")[0]);
}

/** Where a join starts: after Last-Event-ID's event; a non-resumable run's join gets its frames from now on. */
export function joinPoint(
  run: { kwargs?: { stream_resumable?: boolean } },
  lastEventId: string | undefined,
): JoinPoint {
  return storesEvents(run) ? { lastSeq: resumeAfter(lastEventId) } : { live: true };
}

/** After which frame a stream starts: `lastSeq`, or (`live`) the run's latest frame when it is joined. */
export interface JoinPoint {
  lastSeq?: number;
  live?: boolean;
}

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

const HEARTBEAT_MS = 15_000;

/**
 * The text of `source`, with an SSE comment line after every `ms` without any: a run that thinks for a minute
 * (a slow model call) is not cut by a proxy's idle timeout (CloudFront's origin read timeout is 60 s).
 */
export async function* withHeartbeat(
  source: AsyncIterable<string>,
  ms = HEARTBEAT_MS,
): AsyncGenerator<string> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<"tick">((r) => {
        timer = setTimeout(() => r("tick"), ms);
      });
      const got = await Promise.race([next, tick]);
      clearTimeout(timer);
      if (got === "tick") {
        yield ": heartbeat\n\n";
        continue;
      }
      if (got.done) return;
      yield got.value;
      next = it.next();
    }
  } finally {
    // Not awaited: a source waiting for its next frame ends when the stream's signal aborts.
    void it.return?.(undefined);
  }
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

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
} as const;

/** The response headers of a run stream: where the SDK reads the run id and reconnects. */
export function streamHeaders(threadId: string | null, runId: string): Record<string, string> {
  const location = threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
  return {
    ...SSE_HEADERS,
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
