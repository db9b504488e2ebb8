import { Command } from "@langchain/langgraph";
import { cancelCodes, type Item, toItem, transact, updateInput } from "../aws/ddb.ts";
import { logger } from "../log.ts";
import { tableName } from "../tables.ts";
import { controllers, openChannel, type RunOutcome } from "./broker.ts";
import type { DynamoCheckpointSaver } from "./checkpointer.ts";
import type { AgentDeployment } from "./context.ts";
import { deleteEventLog, EventLog } from "./event-log.ts";
import { afterRunWrites, forgetRunWrites, graphById, withRunTagging } from "./run-graph.ts";
import { getRunItem, runKey, threadRuns } from "./runs.ts";
import { toJson } from "./serialize.ts";
import { toThreadState } from "./state.ts";
import { deleteThreadRecord, getThreadItem, threadKey } from "./threads.ts";

// Run execution. Locally a worker is an in-process async task; in AWS the API would invoke a worker Lambda
// asynchronously (InvocationType Event) with {scope, thread_id} and the same `pump` would run there, SSE
// endpoints being served by Lambda response streaming reading the run's durable event log. One run per
// thread at a time: claiming a run takes the thread's `active_run` lock in the same transaction that moves
// the run pending → running; finishing releases it and pumps the thread's next pending run (enqueue).
const T = "main" as const;
const MAX_VALUES_BYTES = 200_000;
const pumping = new Map<string, Promise<void>>();
const timers = new Map<string, NodeJS.Timeout>();

/** Starts the thread's oldest due pending run if the thread is free (serialised per thread in-process). */
export function kick(d: AgentDeployment, threadId: string): void {
  const key = `${d.scope}#${threadId}`;
  const prev = pumping.get(key) ?? Promise.resolve();
  const next = prev
    .then(() => pump(d, threadId))
    .catch((err) => logger.error("run pump failed", { thread_id: threadId, error: err }))
    .finally(() => {
      if (pumping.get(key) === next) pumping.delete(key);
    });
  pumping.set(key, next);
}

async function pump(d: AgentDeployment, threadId: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const thread = await getThreadItem(d, threadId);
    if (!thread || thread.active_run) return;
    const pending = await threadRuns(d, threadId, ["pending"]);
    const now = Date.now();
    const due = pending.filter((r) => !r.not_before || r.not_before <= now);
    if (!due.length) {
      const soonest = Math.min(...pending.map((r) => r.not_before as number));
      if (Number.isFinite(soonest)) later(d, threadId, soonest - now);
      return;
    }
    const run = due[0];
    const ac = new AbortController();
    controllers.set(run.run_id, ac);
    if (await claim(d, run)) {
      void execute(d, run, ac);
      return;
    }
    controllers.delete(run.run_id);
  }
}

function later(d: AgentDeployment, threadId: string, ms: number) {
  const key = `${d.scope}#${threadId}`;
  clearTimeout(timers.get(key));
  timers.set(
    key,
    setTimeout(() => kick(d, threadId), Math.max(ms, 0) + 5),
  );
}

const now = () => new Date().toISOString();

async function claim(d: AgentDeployment, run: Item): Promise<boolean> {
  const lock = updateInput(T, threadKey(d.scope, run.thread_id), {
    set: { active_run: run.run_id, status: "busy", updated_at: now() },
  });
  lock.ConditionExpression += " AND attribute_not_exists(active_run)";
  const start = updateInput(T, runKey(d.scope, run.thread_id, run.run_id), {
    set: { status: "running", updated_at: now() },
    when: { status: "pending" },
  });
  start.ConditionExpression += " AND attribute_not_exists(cancel_action)";
  try {
    await transact([{ Update: lock }, { Update: start }]);
    return true;
  } catch (err) {
    if (cancelCodes(err)) return false;
    throw err;
  }
}

/** A stream frame's name: the API's mode name, `|ns` appended for subgraph events. */
const frameName = (mode: string, ns: string[]) => (ns.length ? `${mode}|${ns.join("|")}` : mode);
const GRAPH_MODE: Record<string, string> = { "messages-tuple": "messages", messages: "messages" };

async function execute(d: AgentDeployment, run: Item, ac: AbortController): Promise<void> {
  const channel = openChannel(run.run_id);
  const log = new EventLog(d.scope, run.run_id);
  const emit = (event: string, data: unknown) => log.add(channel.push(event, data));
  emit("metadata", { run_id: run.run_id, attempt: run.attempt ?? 1 });
  const kw = run.kwargs ?? {};
  let outcome: RunOutcome;
  let threadSet: Item = {};
  try {
    const base = await graphById(d, run.graph_id);
    const rg = {
      graph: base,
      graph_id: run.graph_id as string,
      assistant_id: run.assistant_id as string,
      config: kw.assistant_config ?? {},
      context: kw.assistant_context ?? {},
    };
    const graph = withRunTagging(base);
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
    const config: Record<string, any> = {
      ...rg.config,
      ...(kw.config ?? {}),
      configurable: {
        ...(rg.config.configurable ?? {}),
        ...(kw.config?.configurable ?? {}),
        ...ids,
        ...(kw.checkpoint ?? {}),
        ...(kw.checkpoint_id ? { checkpoint_id: kw.checkpoint_id } : {}),
        thread_id: run.thread_id,
      },
      metadata: { ...(kw.config?.metadata ?? {}), ...(run.metadata ?? {}), ...ids },
      context: { ...rg.context, ...(kw.context ?? {}) },
      streamMode: graphModes,
      subgraphs: kw.stream_subgraphs ?? false,
      interruptBefore: kw.interrupt_before,
      interruptAfter: kw.interrupt_after,
      signal: ac.signal,
    };
    if (config.recursion_limit) config.recursionLimit = config.recursion_limit;
    const input = kw.command ? new Command(kw.command) : (kw.input ?? null);
    // Requested modes map to graph modes (messages-tuple → the graph's [message, metadata] "messages" frames).
    for await (const chunk of await graph.stream(input, config)) {
      const [ns, mode, data] = (config.subgraphs ? chunk : [[], ...(chunk as unknown[])]) as [
        string[],
        string,
        unknown,
      ];
      if (userModes.some((m) => (GRAPH_MODE[m] ?? m) === mode)) emit(frameName(mode, ns), toJson(data));
    }
    const state = toThreadState(await rg.graph.getState({ configurable: { thread_id: run.thread_id } }));
    const interrupted = state.next.length > 0 || state.interrupts.length > 0;
    const values = interrupted
      ? { ...(state.values as object), __interrupt__: state.interrupts }
      : (state.values as Record<string, unknown>);
    outcome = { status: "success", values };
    threadSet = {
      status: interrupted ? "interrupted" : "idle",
      values: JSON.stringify(state.values).length <= MAX_VALUES_BYTES ? state.values : null,
      interrupts: Object.fromEntries(
        (state.tasks as { id: string; interrupts: unknown[] }[])
          .filter((t) => t.interrupts.length)
          .map((t) => [t.id, t.interrupts]),
      ),
      state_updated_at: now(),
    };
  } catch (err) {
    if (ac.signal.aborted) outcome = { status: "cancelled" };
    else {
      const e = err as Error;
      const error = { error: e?.name ?? "Error", message: e?.message ?? String(err) };
      emit("error", error);
      outcome = { status: "error", error, values: { __error__: error } };
      threadSet = { status: "error", error: error.message, state_updated_at: now() };
    }
  }
  try {
    await log.flush();
    outcome = await finish(d, run, outcome, threadSet);
  } catch (err) {
    logger.error("run finalisation failed", { run_id: run.run_id, error: err });
  } finally {
    controllers.delete(run.run_id);
    forgetRunWrites(run.run_id);
    channel.end(outcome);
    if (kw.on_completion === "delete") await deleteStatelessThread(d, run.thread_id).catch(() => {});
    kick(d, run.thread_id);
  }
}

/** Writes the run's final status and releases the thread, or carries out a cancel that arrived meanwhile. */
async function finish(
  d: AgentDeployment,
  run: Item,
  outcome: RunOutcome,
  threadSet: Item,
): Promise<RunOutcome> {
  const rk = runKey(d.scope, run.thread_id, run.run_id);
  const release = (set: Item) => {
    const u = updateInput(T, threadKey(d.scope, run.thread_id), {
      set: { ...set, updated_at: now() },
      when: { active_run: run.run_id },
      remove: ["active_run", ...(set.status === "error" ? [] : ["error"])],
    });
    return { Update: u };
  };
  if (outcome.status !== "cancelled") {
    const done = updateInput(T, rk, {
      set: { status: outcome.status, updated_at: now() },
      when: { status: "running" },
    });
    done.ConditionExpression += " AND attribute_not_exists(cancel_action)";
    try {
      await transact([{ Update: done }, release(threadSet)]);
      return outcome;
    } catch (err) {
      if (!cancelCodes(err)) throw err;
    }
  }
  const action = (await getRunItem(d, run.thread_id, run.run_id))?.cancel_action ?? "interrupt";
  if (action === "rollback") {
    // The run's checkpoints go before its record, so nobody sees a deleted run's state.
    await afterRunWrites(run.run_id, () =>
      (d.checkpointer() as DynamoCheckpointSaver).deleteByRunId(run.thread_id, run.run_id),
    );
    await transact([
      { Delete: { TableName: tableName(T), Key: toItem(rk) } },
      release({ status: "idle", state_updated_at: now() }),
    ]);
    await deleteEventLog(d.scope, run.run_id);
    return { status: "deleted" };
  }
  const done = updateInput(T, rk, {
    set: { status: "interrupted", updated_at: now() },
    when: { status: "running" },
  });
  await transact([{ Update: done }, release({ status: "idle" })]);
  return { status: "interrupted" };
}

async function deleteStatelessThread(d: AgentDeployment, threadId: string): Promise<void> {
  if ((await threadRuns(d, threadId, ["pending", "running"])).length) return;
  await deleteThreadRecord(d, threadId);
}
