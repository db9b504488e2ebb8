import { queryPage } from "../../aws/ddb.ts";
import type { RunRecord } from "../../records/agent.ts";
import { agentKeys } from "../../records/agent.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { storesEvents } from "../stream/event-log.ts";
import { eventId, sseFrame } from "../stream/stream.ts";
import { threadState } from "../threads/state.ts";
import { getThreadItem } from "../threads/threads.ts";
import { runFrames } from "./join.ts";
import { getRunItem, threadRuns } from "./runs.ts";
import type { ThreadStreamMode } from "./schemas.ts";

// Joining a thread's stream (GET /threads/{thread_id}/stream): the runs of the thread one after the other, each
// as it happens, and then the next one, until the client leaves (or the thread is deleted). Event ids are
// `<run_id>:<n>` (the run's own event ids, from 0), `<run_id>:state` and `<run_id>:end` for the events that close
// a run, so Last-Event-ID resumes inside or after any run; `-` (or `-1`) replays every run still stored; without it the
// stream starts at the thread's active run (from its first frame), else at its next run. A non-resumable run
// (stream_resumable: false) that had started before the join is followed from the join on, none of it replayed.

const POLL_MS = 250;
const HEARTBEAT_MS = 15_000;
const END = Number.MAX_SAFE_INTEGER;
const STATE = END - 1;

interface Cursor {
  runId: string;
  /** The last event seen of that run: a frame's seq, STATE or END. */
  seq: number;
}

function parseLastEventId(id: string | undefined): Cursor | "all" | undefined {
  if (id === "-" || id === "-1") return "all";
  const at = id?.lastIndexOf(":") ?? -1;
  if (!id || at <= 0) return undefined;
  const tail = id.slice(at + 1);
  const seq = tail === "end" ? END : tail === "state" ? STATE : Number(tail) + 1;
  return Number.isSafeInteger(seq) && seq >= 0 ? { runId: id.slice(0, at), seq } : undefined;
}

/** The id of the run before which streaming starts (runs with a greater id are streamed). */
function startAfter(runs: RunRecord[], from: Cursor | "all" | undefined): string {
  const before = (runId: string) => runs.filter((r) => r.run_id < runId).at(-1)?.run_id ?? "";
  if (from === "all") return "";
  if (from) return before(from.runId);
  const active = runs.find((r) => r.status === "pending" || r.status === "running");
  return active ? before(active.run_id) : (runs.at(-1)?.run_id ?? "");
}

/** The thread's first run after `floor` (run ids sort by creation). */
async function nextRun(d: AgentDeployment, threadId: string, floor: string): Promise<RunRecord | undefined> {
  const { items } = await queryPage<RunRecord>("main", {
    KeyConditionExpression: floor ? "PK = :pk AND SK > :floor" : "PK = :pk",
    values: { ":pk": agentKeys.runsPk(d.scope, threadId), ...(floor ? { ":floor": floor } : {}) },
    ConsistentRead: true,
    Limit: 1,
  });
  return items[0];
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });

/**
 * One run's events after `after`: run_modes → every frame; lifecycle → its `metadata` (start) frame; then, once it
 * ended, state_update → `values` with the thread's state, and run_modes or lifecycle → `end` {run_id, status}.
 */
async function* runEvents(
  d: AgentDeployment,
  run: RunRecord,
  after: number,
  modes: ThreadStreamMode[],
  signal: AbortSignal,
  live: boolean,
): AsyncGenerator<string> {
  const all = modes.includes("run_modes");
  const ends = all || modes.includes("lifecycle");
  const id = (tail: number | string) => `${run.run_id}:${tail}`;
  if (after < STATE)
    for await (const f of runFrames(
      d,
      run.thread_id,
      run.run_id,
      live ? { live, signal } : { lastSeq: after, signal },
    ))
      if (all || (ends && f.event === "metadata")) yield sseFrame(f, id(eventId(f.seq)));
  if (signal.aborted) return;
  if (after < STATE && modes.includes("state_update")) {
    const values = (await threadState(d, run.thread_id)).values;
    yield sseFrame({ seq: STATE, event: "values", data: values }, id("state"));
  }
  if (after < END && ends) {
    const status = (await getRunItem(d, run.thread_id, run.run_id))?.status ?? "rollback";
    yield sseFrame({ seq: END, event: "end", data: { run_id: run.run_id, status } }, id("end"));
  }
}

/** The SSE text of a thread's runs, from the point Last-Event-ID names, until `signal` aborts. */
export async function* threadSse(
  d: AgentDeployment,
  threadId: string,
  opts: { modes: ThreadStreamMode[]; lastEventId?: string; signal: AbortSignal },
): AsyncGenerator<string> {
  const from = parseLastEventId(opts.lastEventId);
  const before = await threadRuns(d, threadId);
  const earlier = new Set(before.map((r) => r.run_id));
  let floor = startAfter(before, from);
  let idle = 0;
  while (!opts.signal.aborted) {
    const next = await nextRun(d, threadId, floor);
    if (next) {
      idle = 0;
      const after = typeof from === "object" && from.runId === next.run_id ? from.seq : 0;
      const live = earlier.has(next.run_id) && !storesEvents(next);
      yield* runEvents(d, next, after, opts.modes, opts.signal, live);
      floor = next.run_id;
      continue;
    }
    if (!(await getThreadItem(d, threadId))) return;
    await pause(POLL_MS, opts.signal);
    idle += POLL_MS;
    // A comment line now and then keeps proxies (and the SDK's idle detection) from dropping a quiet stream.
    if (idle >= HEARTBEAT_MS && !opts.signal.aborted) {
      idle = 0;
      yield ": heartbeat\n\n";
    }
  }
}
