import { BadRequest, NotFound } from "../../errors.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { CompiledGraphLike, StateSnapshotLike } from "../deployment/graphs.ts";
import { graphForRun } from "../deployment/graphs.ts";
import { toJson } from "../stream/serialize.ts";
import { getThreadItem } from "./threads.ts";

// Thread state as the agent API shows it: the graph's own getState/getStateHistory/updateState over the
// thread's checkpoints, mapped to the ThreadState shape the SDK reads.
export interface ThreadState {
  values: unknown;
  next: string[];
  tasks: unknown[];
  checkpoint: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
  created_at: string | null;
  parent_checkpoint: Record<string, unknown> | null;
  interrupts: unknown[];
}

const EMPTY: ThreadState = {
  values: {},
  next: [],
  tasks: [],
  checkpoint: null,
  metadata: {},
  created_at: null,
  parent_checkpoint: null,
  interrupts: [],
};

function checkpointOf(config: unknown): Record<string, unknown> | null {
  const c = (config as { configurable?: Record<string, unknown> } | null | undefined)?.configurable;
  if (!c?.checkpoint_id) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns ?? "",
    checkpoint_id: c.checkpoint_id,
    checkpoint_map: c.checkpoint_map ?? null,
  };
}

/**
 * A `debug` stream event as the reference server sends it: a checkpoint event's payload also carries its
 * `checkpoint` and `parent_checkpoint` in the API's form (beside LangGraph's config and parentConfig).
 */
export function debugEvent(data: unknown): unknown {
  const d = data as { type?: unknown; payload?: Record<string, unknown> } | null;
  if (d?.type !== "checkpoint" || !d.payload) return data;
  return {
    ...d,
    payload: {
      ...d.payload,
      checkpoint: checkpointOf(d.payload.config),
      parent_checkpoint: checkpointOf(d.payload.parentConfig),
    },
  };
}

/** A subgraph task's state (getState with subgraphs): as the reference nests it, without `interrupts`. */
function taskState(s: StateSnapshotLike): Omit<ThreadState, "interrupts"> {
  const { interrupts: _, ...state } = toThreadState(s);
  return state;
}

/** A task's checkpoint as its config names it: the thread and namespace, the checkpoint once there is one. */
function taskCheckpoint(c: Record<string, unknown>): Record<string, unknown> {
  return (
    checkpointOf({ configurable: c }) ?? { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "" }
  );
}

export function toThreadState(s: StateSnapshotLike): ThreadState {
  const tasks = (s.tasks ?? []).map((t) => ({
    id: t.id,
    name: t.name,
    path: toJson(t.path ?? []),
    error: t.error ? String((t.error as { message?: unknown }).message ?? t.error) : null,
    interrupts: toJson(t.interrupts ?? []),
    // A subgraph's task names its checkpoint namespace (`<node>:<task id>`) even before it has a checkpoint.
    checkpoint: t.state?.configurable
      ? taskCheckpoint(t.state.configurable as Record<string, unknown>)
      : null,
    state: t.state?.values !== undefined ? taskState(t.state) : null,
    // What the task wrote once it finished; null until then, as the reference answers.
    result: t.result === undefined ? null : toJson(t.result),
  }));
  return {
    values: toJson(s.values ?? {}),
    next: s.next ?? [],
    tasks,
    checkpoint: checkpointOf(s.config),
    metadata: (toJson(s.metadata ?? {}) as Record<string, unknown>) ?? {},
    created_at: s.createdAt ?? null,
    parent_checkpoint: checkpointOf(s.parentConfig),
    interrupts: tasks.flatMap((t) => t.interrupts as unknown[]),
  };
}

/** The thread's graph: a factory export rebuilt from the config the thread's last run ran with. */
async function threadGraph(d: AgentDeployment, threadId: string): Promise<CompiledGraphLike | undefined> {
  const item = await getThreadItem(d, threadId);
  if (!item) throw new NotFound(`Thread with ID ${threadId} not found`);
  if (!item.graph_id) return undefined;
  const config = item.config ?? {};
  return graphForRun(d, item.graph_id, {
    ...config,
    configurable: { ...(config.configurable ?? {}), thread_id: threadId },
  });
}

const configFor = (threadId: string, checkpoint: Record<string, unknown> = {}) => ({
  configurable: { checkpoint_ns: "", ...checkpoint, thread_id: threadId },
});

export async function threadState(
  d: AgentDeployment,
  threadId: string,
  opts: { checkpoint?: Record<string, unknown>; subgraphs?: boolean } = {},
): Promise<ThreadState> {
  const graph = await threadGraph(d, threadId);
  if (!graph) return EMPTY;
  const s = await graph.getState(configFor(threadId, opts.checkpoint), {
    subgraphs: opts.subgraphs ?? false,
  });
  return toThreadState(s);
}

/**
 * The request asked for what the graph cannot do (an unknown as_node, an ambiguous update): a 400 with
 * LangGraph's own words instead of a server error. Any other error stays as it is.
 */
function requestError(err: unknown): unknown {
  return (err as Error)?.name === "InvalidUpdateError" ? new BadRequest((err as Error).message) : err;
}

/**
 * An as_node the graph's node table has only through its prototype (`valueOf`, `constructor`): LangGraph would
 * take it for a node and call into it, so it is refused as the unknown node it is.
 */
function checkNodeName(graph: object, asNode: string | undefined): void {
  const nodes = (graph as { nodes?: unknown }).nodes;
  if (asNode === undefined || typeof nodes !== "object" || nodes === null) return;
  if (asNode in nodes && !Object.hasOwn(nodes, asNode)) throw new BadRequest(`Node ${asNode} does not exist`);
}

export async function updateThreadState(
  d: AgentDeployment,
  threadId: string,
  input: { values?: unknown; as_node?: string; checkpoint?: Record<string, unknown>; checkpoint_id?: string },
): Promise<{ checkpoint: Record<string, unknown> | null }> {
  const graph = await threadGraph(d, threadId);
  if (!graph) throw new BadRequest("The thread has no graph yet: run it once before updating its state");
  const checkpoint = {
    ...(input.checkpoint ?? {}),
    ...(input.checkpoint_id ? { checkpoint_id: input.checkpoint_id } : {}),
  };
  checkNodeName(graph, input.as_node);
  try {
    const out = await graph.updateState(configFor(threadId, checkpoint), input.values ?? null, input.as_node);
    return { checkpoint: checkpointOf(out) };
  } catch (err) {
    throw requestError(err);
  }
}

/** Merges `metadata` into the metadata of the thread's latest checkpoint (the reference's patchState). */
export async function patchThreadState(
  d: AgentDeployment,
  threadId: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  if (!(await getThreadItem(d, threadId))) throw new NotFound(`Thread with ID ${threadId} not found`);
  if (!(await d.checkpointer().patchLatestMetadata(threadId, metadata)))
    throw new BadRequest("The thread has no state yet: run it once before patching its state's metadata");
}

/**
 * Applies supersteps to a thread in order, each one step of its graph (LangGraph's bulkUpdateState): how a
 * thread is created with a history (`threads.create({supersteps})`).
 */
export async function applySupersteps(
  d: AgentDeployment,
  threadId: string,
  supersteps: { updates: { values?: unknown; as_node: string }[] }[],
): Promise<void> {
  const graph = await threadGraph(d, threadId);
  if (!graph) throw new BadRequest("supersteps need the thread's graph: pass graph_id (metadata.graph_id)");
  const bulk = graph.bulkUpdateState as
    | ((config: Record<string, unknown>, steps: unknown[]) => Promise<unknown>)
    | undefined;
  if (typeof bulk !== "function")
    throw new BadRequest("The graph's LangGraph version cannot apply supersteps (no bulkUpdateState)");
  for (const s of supersteps) for (const u of s.updates) checkNodeName(graph, u.as_node);
  const steps = supersteps.map((s) => ({
    updates: s.updates.map((u) => ({ values: u.values ?? null, asNode: u.as_node })),
  }));
  try {
    await bulk.call(graph, configFor(threadId), steps);
  } catch (err) {
    throw requestError(err);
  }
}

export async function threadHistory(
  d: AgentDeployment,
  threadId: string,
  opts: {
    limit?: number;
    before?: string | Record<string, unknown>;
    metadata?: Record<string, unknown>;
    checkpoint?: Record<string, unknown>;
  },
): Promise<ThreadState[]> {
  const graph = await threadGraph(d, threadId);
  if (!graph) return [];
  const before = typeof opts.before === "string" ? { checkpoint_id: opts.before } : opts.before;
  const out: ThreadState[] = [];
  for await (const s of graph.getStateHistory(configFor(threadId, opts.checkpoint), {
    limit: opts.limit ?? 10,
    before: before ? configFor(threadId, before) : undefined,
    filter: opts.metadata,
  }))
    out.push(toThreadState(s));
  return out;
}
