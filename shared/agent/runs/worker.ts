import { Command } from "@langchain/langgraph";
import { config } from "../../config.ts";
import { LeaseLost, RunAborted } from "../../errors.ts";
import { logger } from "../../log.ts";
import {
  type GraphConfig,
  type RunKwargs,
  type RunRecord,
  runs,
  type ThreadRecord,
} from "../../records/agent.ts";
import { isoNow } from "../../time.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { type CompiledGraphLike, graphForRun } from "../deployment/graphs.ts";
import { controllers, openChannel, type RunOutcome } from "../stream/broker.ts";
import { dropEventLog, EventLog, lastEventSeq, liveOnlyLog, storesEvents } from "../stream/event-log.ts";
import { attachEventsMode } from "../stream/events-mode.ts";
import { MessagesMode } from "../stream/messages-mode.ts";
import { toJson } from "../stream/serialize.ts";
import { debugEvent, toThreadState } from "../threads/state.ts";
import { getThreadItem } from "../threads/threads.ts";
import { endRunTrace, traceRun } from "../tracing/run-tracing.ts";
import { abortReason, executor } from "./executor.ts";
import { finish, jsonBytes, MAX_VALUES_BYTES } from "./finish.ts";
import { getRunItem, type Kick, threadRuns } from "./runs.ts";
import { CANCEL_POLL_MS, wakeTimerMs } from "./settings.ts";
import { deleteStatelessThread } from "./stateless.ts";
import { attemptOf, claim, mendQueued } from "./thread-lock.ts";
import { notifyWebhook } from "./webhook.ts";

// Run execution. Locally a worker is an in-process async task (`kick` pumps the thread here). In AWS
// (AGENT_RUN_WORKER=lambda, see executor.ts) `kick` asks the platform to invoke the runtime's function
// asynchronously with {tenant_id, deployment_id, thread_id} (runtime/drain-asks.ts), which runs the same `pump`
// until the thread has nothing due (drainThread); SSE endpoints, served by Lambda response streaming, tail the
// run's durable event log. One run per thread at a time: claiming a run takes the thread's `active_run` lock in
// the same transaction that moves the run pending → running with a lease; finishing releases it and pumps the
// thread's next pending run (enqueue).
// A worker renews its lease while it runs; a run whose lease ran out (its worker died) is put back to
// pending with attempt + 1 by the sweeper (sweeper.ts) and resumes from its last checkpoint.
// A thread counts its pending runs in `queued`: the write that stores a pending run adds one, claiming or
// cancelling it takes one off. So a new run on a free thread with nothing queued is stored already running
// (runs.ts `storeStarted`), and a finished run releases a thread with nothing queued without a look for more.
const pumping = new Map<string, Promise<void>>();
const timers = new Map<string, NodeJS.Timeout>();
/** How long a remote worker sleeps for a delayed run (after_seconds) before leaving it to the sweeper. */
const MAX_WORKER_SLEEP_MS = 60_000;

/** Has the thread's next due run started: here (in-process), or by a worker function the platform invokes for it. */
export const kick: Kick = (d, threadId) => executor().dispatch(d, threadId, () => kickHere(d, threadId));
// A run createRun stored already running (the thread was free) executes here at once, in-process only.
kick.startClaimed = (d, run) => {
  const ac = new AbortController();
  controllers.set(run.run_id, ac);
  void execute(d, run, ac).then(kickAgainIf(d, run.thread_id));
};

/** After a run here: pumps its thread again when it may have runs queued. */
const kickAgainIf = (d: AgentDeployment, threadId: string) => (more: boolean) => {
  if (more) kickHere(d, threadId);
};

/** Starts the thread's oldest due pending run if the thread is free (serialised per thread in-process). */
function kickHere(d: AgentDeployment, threadId: string): void {
  const key = `${d.scope}#${threadId}`;
  const prev = pumping.get(key) ?? Promise.resolve();
  const next = prev
    .then(() => pump(d, threadId))
    .then((p) => {
      if (p.wakeInMs !== undefined) later(d, threadId, p.wakeInMs);
      p.running?.then(kickAgainIf(d, threadId));
    })
    .catch((err) => logger.error("run pump failed", { thread_id: threadId, error: err }))
    .finally(() => {
      if (pumping.get(key) === next) pumping.delete(key);
    });
  pumping.set(key, next);
}

/**
 * The worker function's loop (an invocation the platform started): runs the thread's due runs one after another
 * until none is due, sleeping for a delayed run that is due soon. A later one, and what is left at the deadline,
 * is the run sweeper's: a runtime never starts an invocation of its own.
 */
export async function drainThread(d: AgentDeployment, threadId: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const p = await pump(d, threadId);
    if (p.running) {
      if (!(await p.running)) return;
    } else if (p.wakeInMs !== undefined && p.wakeInMs <= Math.min(MAX_WORKER_SLEEP_MS, deadline - Date.now()))
      await new Promise((r) => setTimeout(r, Math.max(p.wakeInMs ?? 0, 0) + 5));
    else return;
  }
}

interface Pumped {
  /** The execution started, if one did; it resolves to whether the thread may have more runs queued. */
  running?: Promise<boolean>;
  /** When the soonest delayed run is due, if nothing was due now. */
  wakeInMs?: number;
}

async function pump(d: AgentDeployment, threadId: string): Promise<Pumped> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const thread = await getThreadItem(d, threadId);
    if (!thread || thread.active_run) return {};
    const pending = await threadRuns(d, threadId, ["pending"]);
    // The queued count only ever errs high (a pending run is counted in the write that stores it); mend it.
    const queued = thread.queued ?? 0;
    if (!pending.length && queued > 0) await mendQueued(d, threadId, queued);
    const now = Date.now();
    const due = pending.filter((r) => !r.not_before || r.not_before <= now);
    if (!due.length) {
      const soonest = Math.min(...pending.map((r) => r.not_before ?? Number.POSITIVE_INFINITY));
      return Number.isFinite(soonest) ? { wakeInMs: soonest - now } : {};
    }
    const run = due[0];
    const ac = new AbortController();
    controllers.set(run.run_id, ac);
    const lease = await claim(d, run);
    if (lease) return { running: execute(d, { ...run, lease_until: lease }, ac) };
    controllers.delete(run.run_id);
  }
  return {};
}

/** Kicks the thread when its delayed run is due; a wait beyond one timer's reach wakes early and re-arms. */
function later(d: AgentDeployment, threadId: string, ms: number) {
  const key = `${d.scope}#${threadId}`;
  clearTimeout(timers.get(key));
  timers.set(
    key,
    setTimeout(() => kick(d, threadId), wakeTimerMs(ms)),
  );
}

const leaseLost = (ac: AbortController) => abortReason(ac.signal) === "lease-lost";

/**
 * While a run executes: renews its lease at a third of the lease time, and with remote workers polls the
 * run's `cancel_action` (an in-process worker is aborted directly by cancelRun).
 */
function watchRun(d: AgentDeployment, run: RunRecord, ac: AbortController): () => void {
  const key = { scope: d.scope, thread: run.thread_id, run: run.run_id };
  const lease = config.agent.runLeaseMs;
  const remote = executor().pollsCancel;
  let renewAt = Date.now() + lease / 3;
  let busy = false;
  const tick = async () => {
    if (busy || ac.signal.aborted) return;
    busy = true;
    try {
      if (remote) {
        const item = await getRunItem(d, run.thread_id, run.run_id);
        if (!item || item.cancel_action) ac.abort(new RunAborted(item?.cancel_action ?? "deleted"));
      }
      if (Date.now() >= renewAt && !ac.signal.aborted) {
        renewAt = Date.now() + lease / 3;
        const kept = await runs.update(key, {
          set: { lease_until: Date.now() + lease },
          when: { status: "running", attempt: attemptOf(run) },
        });
        // Taken back by the sweeper (this worker looked dead): stop, the retry owns the run now.
        if (!kept) ac.abort(new RunAborted("lease-lost"));
      }
    } catch (err) {
      logger.warn("run watch failed", { run_id: run.run_id, error: err });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), remote ? CANCEL_POLL_MS : lease / 3);
  return () => clearInterval(timer);
}

/**
 * A retried run (attempt > 1) resumes from the last checkpoint its earlier attempt wrote, so nothing runs
 * twice; with no checkpoint of its own yet it starts over with its input.
 */
async function resumesFromCheckpoint(d: AgentDeployment, run: RunRecord): Promise<boolean> {
  if ((run.attempt ?? 1) <= 1) return false;
  const latest = await d
    .checkpointer()
    .getTuple({ configurable: { thread_id: run.thread_id, checkpoint_ns: "" } });
  return (latest?.metadata as Record<string, unknown> | undefined)?.run_id === run.run_id;
}

/** The config of a run's graph call: LangGraph's RunnableConfig as the graph's own copy of LangGraph reads it. */
interface GraphCall extends GraphConfig {
  configurable: Record<string, unknown>;
  /** The run's tracer and the events mode join the call's callbacks, its root run taking the run's id. */
  callbacks?: unknown;
  runId?: unknown;
}

/** A client's command as LangGraph's Command takes it (its `goto` is sent as JSON, not typed). */
type CommandInput = ConstructorParameters<typeof Command>[0];

/** A stream frame's name: the API's mode name, `|ns` appended for subgraph events. */
const frameName = (mode: string, ns: string[]) => (ns.length ? `${mode}|${ns.join("|")}` : mode);
const GRAPH_MODE: Record<string, string> = { "messages-tuple": "messages" };

/** Runs a claimed run to its end; answers whether the thread may have more runs queued. */
async function execute(d: AgentDeployment, run: RunRecord, ac: AbortController): Promise<boolean> {
  const channel = openChannel(run.run_id);
  const saver = d.checkpointer();
  const fence = {
    key: runs.key({ scope: d.scope, thread: run.thread_id, run: run.run_id }),
    attempt: attemptOf(run),
    run: run.run_id,
  };
  // A non-resumable run's frames: the channel alone here; elsewhere streams tail the log until it is dropped.
  const keep = storesEvents(run);
  const log = keep
    ? new EventLog(d.scope, run.run_id)
    : executor().live(run.run_id)
      ? undefined
      : liveOnlyLog(d.scope, run.run_id);
  const unwatch = watchRun(d, run, ac);
  if ((run.attempt ?? 1) > 1) channel.startAfter(await lastEventSeq(d.scope, run.run_id).catch(() => 0));
  const emit = (event: string, data: unknown) => {
    const frame = channel.push(event, data);
    log?.add(frame);
  };
  emit("metadata", { run_id: run.run_id, attempt: run.attempt ?? 1 });
  const kw: Partial<RunKwargs> = run.kwargs ?? {};
  let outcome: RunOutcome;
  let threadSet: Partial<ThreadRecord> = {};
  let more = true;
  try {
    const { rg, userModes, config } = graphCall(run, kw, ac.signal);
    const kept = threadConfig(rg.config, kw.config);
    const resume = await resumesFromCheckpoint(d, run);
    if (resume) {
      delete config.configurable.checkpoint_id;
      delete config.configurable.checkpoint_ns;
    }
    const input = resume ? null : kw.command ? new Command(kw.command as CommandInput) : (kw.input ?? null);
    traceRun(d, run, config, executor().settlesBeforeReturn);
    const graph = await graphForRun(d, run.graph_id, config);
    // This run is the thread's only writer until it ends: the saver keeps its latest checkpoint at hand.
    saver.track(run.thread_id, fence);
    // stream_mode "events": the run's LangChain v2 events as `events` frames (events-mode.ts).
    if (userModes.includes("events"))
      attachEventsMode(config, { runId: run.run_id, input, emit: (e) => emit("events", e) });
    await streamGraph(await graph.stream(input, config), userModes, config.subgraphs === true, emit);
    ({ outcome, threadSet } = await endState(graph, run.thread_id, kept));
  } catch (err) {
    if (err instanceof LeaseLost) ac.abort(new RunAborted("lease-lost"));
    // A checkpoint refused because the run is being rolled back (a worker elsewhere learns it here first).
    else if (err instanceof RunAborted) ac.abort(err);
    if (ac.signal.aborted) outcome = { status: "cancelled" };
    else {
      const e = err as Error;
      const error = { error: e?.name ?? "Error", message: e?.message ?? String(err) };
      emit("error", error);
      outcome = { status: "error", error, values: { __error__: error } };
      threadSet = refusedResume(err) ?? { status: "error", error: error.message, state_updated_at: isoNow() };
    }
  }
  try {
    // Side by side: the run's held writes and its last frames. Which cancel stopped it is the abort's
    // reason (cancelRun here, or the record the worker polled); read from the record only if it says not.
    const reason = abortReason(ac.signal);
    const cancel = reason === "interrupt" || reason === "rollback" ? reason : undefined;
    const [, frames, record] = await Promise.all([
      saver.settle(run.thread_id),
      log?.take() ?? [],
      outcome.status === "cancelled" && !cancel ? getRunItem(d, run.thread_id, run.run_id) : undefined,
    ]);
    ({ outcome, more } = await finish(d, run, outcome, threadSet, frames, cancel ?? record?.cancel_action));
  } catch (err) {
    // A worker that lost its lease is refused by every fenced write: expected, the retry finishes the run.
    if (!leaseLost(ac)) logger.error("run finalisation failed", { run_id: run.run_id, error: err });
  } finally {
    unwatch();
    if (controllers.get(run.run_id) === ac) controllers.delete(run.run_id);
  }
  // This worker stalled past its lease and the run was retried: the retry owns its stream, thread and hooks.
  if (leaseLost(ac)) {
    logger.warn("run lease lost: this attempt stops", { run_id: run.run_id, attempt: attemptOf(run) });
    saver.abandon(run.thread_id, fence);
    return false;
  }
  void saver.untrack(run.thread_id, fence);
  saver.forgetRun(run.run_id);
  channel.end(outcome);
  const hook = notifyWebhook(d, run, outcome).catch((err) =>
    logger.warn("run webhook failed", { run_id: run.run_id, error: err }),
  );
  // A stateless thread goes once its webhook went out (the webhook reads the run's record and state).
  const removed =
    kw.on_completion === "delete"
      ? hook
          .then(() =>
            deleteStatelessThread(d, run.thread_id, executor().live(run.run_id) ? undefined : run.run_id),
          )
          .catch((err) => logger.warn("stateless thread deletion failed", { run_id: run.run_id, error: err }))
      : undefined;
  await endRunTrace(run.run_id);
  if (log && !keep) await dropEventLog(d.scope, run.run_id);
  // A worker function must not return (and be frozen) before its webhook went out and its thread went.
  if (executor().settlesBeforeReturn) await Promise.all([hook, removed]);
  return more;
}

/** The graph call a run makes: its config (assistant's, then the run's), the modes it streams. */
function graphCall(run: RunRecord, kw: Partial<RunKwargs>, signal: AbortSignal) {
  const rg = {
    graph_id: run.graph_id,
    assistant_id: run.assistant_id,
    config: kw.assistant_config ?? {},
    context: kw.assistant_context ?? {},
  };
  const userModes: string[] = kw.stream_mode ?? ["values"];
  const graphModes = [
    ...new Set([...userModes.map((m) => GRAPH_MODE[m] ?? m).filter((m) => m !== "events"), "values"]),
  ];
  const ids = {
    run_id: run.run_id,
    thread_id: run.thread_id,
    graph_id: rg.graph_id,
    assistant_id: rg.assistant_id,
  };
  const config: GraphCall = {
    ...rg.config,
    ...(kw.config ?? {}),
    configurable: {
      ...(rg.config.configurable ?? {}),
      ...(kw.config?.configurable ?? {}),
      ...ids,
      ...(kw.checkpoint ?? {}),
      ...(kw.checkpoint_id ? { checkpoint_id: kw.checkpoint_id } : {}),
      // LangGraph's strict resume: the graph refuses a resume that answers no pending interrupt.
      ...(kw.strict_resume ? { __pregel_strict_resume: true } : {}),
      thread_id: run.thread_id,
    },
    metadata: { ...(kw.config?.metadata ?? {}), ...(run.metadata ?? {}), ...ids },
    context: { ...rg.context, ...(kw.context ?? {}) },
    streamMode: graphModes,
    subgraphs: kw.stream_subgraphs ?? false,
    interruptBefore: kw.interrupt_before,
    interruptAfter: kw.interrupt_after,
    // The run's durability (LangGraph refuses checkpointDuring beside it).
    ...(kw.durability ? { durability: kw.durability } : {}),
    signal,
  };
  if (config.recursion_limit) config.recursionLimit = config.recursion_limit;
  return { rg, userModes, config };
}

/**
 * The graph's stream as the run's frames: requested modes map to graph modes (messages-tuple → the graph's
 * [message, metadata] "messages" frames); "messages" mode turns the same frames into
 * messages/metadata|partial|complete (messages-mode.ts).
 */
async function streamGraph(
  stream: AsyncIterable<unknown>,
  userModes: string[],
  subgraphs: boolean,
  emit: (event: string, data: unknown) => void,
) {
  const tuples = userModes.includes("messages-tuple");
  const partials = userModes.includes("messages") ? new Map<string, MessagesMode>() : undefined;
  for await (const chunk of stream) {
    const [ns, mode, data] = (subgraphs ? chunk : [[], ...(chunk as unknown[])]) as [
      string[],
      string,
      unknown,
    ];
    if (mode === "messages" && partials) {
      const key = ns.join("|");
      if (!partials.has(key)) partials.set(key, new MessagesMode());
      const [message, meta] = data as [unknown, unknown];
      for (const [event, frame] of partials.get(key)!.push(message, meta)) emit(frameName(event, ns), frame);
      if (!tuples) continue;
    }
    if (userModes.some((m) => (GRAPH_MODE[m] ?? m) === mode))
      emit(frameName(mode, ns), toJson(mode === "debug" ? debugEvent(data) : data));
  }
  for (const [key, m] of partials ?? [])
    for (const [event, frame] of m.end()) emit(frameName(event, key ? key.split("|") : []), frame);
}

/** A run that ran to its end: its outcome (the final values, interrupts included) and the thread's new state. */
async function endState(
  graph: Pick<CompiledGraphLike, "getState">,
  threadId: string,
  kept: Partial<ThreadRecord>,
): Promise<{ outcome: RunOutcome; threadSet: Partial<ThreadRecord> }> {
  const state = toThreadState(await graph.getState({ configurable: { thread_id: threadId } }));
  const interrupted = state.next.length > 0 || state.interrupts.length > 0;
  const values = interrupted
    ? { ...(state.values as object), __interrupt__: state.interrupts }
    : (state.values as Record<string, unknown>);
  const outcome: RunOutcome = { status: "success", values };
  const threadSet: Partial<ThreadRecord> = {
    status: interrupted ? "interrupted" : "idle",
    values: jsonBytes(state.values) <= MAX_VALUES_BYTES ? (state.values as ThreadRecord["values"]) : null,
    interrupts: Object.fromEntries(
      (state.tasks as { id: string; interrupts: unknown[] }[])
        .filter((t) => t.interrupts.length)
        .map((t) => [t.id, t.interrupts]),
    ),
    state_updated_at: isoNow(),
    ...kept,
  };
  return { outcome, threadSet };
}

/** The run's own keys of a configurable: a thread's kept config holds none of them. */
const RUN_KEYS = new Set([
  "run_id",
  "thread_id",
  "checkpoint_id",
  "checkpoint_ns",
  "checkpoint_map",
  "__pregel_strict_resume",
]);
/** A config a thread keeps beside its values (the item holds 400 KB in all); a larger one is not kept. */
const MAX_THREAD_CONFIG_BYTES = 32_000;

/** The config a thread keeps of its run (ThreadRecord.config): the assistant's, then the run's own. */
function threadConfig(assistant: GraphConfig, run: GraphConfig | undefined): { config?: GraphConfig } {
  const { configurable: a = {}, ...fromAssistant } = assistant;
  const { configurable: r = {}, ...fromRun } = run ?? {};
  const configurable = Object.fromEntries(Object.entries({ ...a, ...r }).filter(([k]) => !RUN_KEYS.has(k)));
  const config = { ...fromAssistant, ...fromRun, configurable };
  return jsonBytes(config) <= MAX_THREAD_CONFIG_BYTES ? { config } : {};
}

/**
 * A strict resume the graph refused (UnknownInterruptError) fails the run, not the thread: the thread is left as
 * it was — interrupted while interrupts are pending, else idle.
 */
function refusedResume(err: unknown): Partial<ThreadRecord> | undefined {
  const e = err as { name?: string; pendingIds?: unknown } | null;
  if (e?.name !== "UnknownInterruptError") return undefined;
  return { status: Array.isArray(e.pendingIds) && e.pendingIds.length ? "interrupted" : "idle" };
}
