import { graphOf, resolveAssistant } from "./assistants.ts";
import type { AgentDeployment } from "./context.ts";
import type { CompiledGraphLike } from "./graphs.ts";

// The graph a run or a thread's state call addresses: `assistant_id` is an assistant id or a graph id.
export interface RunGraph {
  assistant_id: string;
  graph_id: string;
  /** The assistant's own config and context; a run's values override them. */
  config: Record<string, any>;
  context: Record<string, unknown>;
}

/** The assistant and graph a run addresses, from the records (the graph itself is loaded when the run executes). */
export async function graphFor(d: AgentDeployment, assistantIdOrGraphId: string): Promise<RunGraph> {
  const assistant = await resolveAssistant(d, assistantIdOrGraphId);
  return {
    assistant_id: assistant.assistant_id,
    graph_id: assistant.graph_id,
    config: (assistant.config ?? {}) as Record<string, any>,
    context: (assistant.context ?? {}) as Record<string, unknown>,
  };
}

/** The graph of a thread (bound by its first run). */
export const graphById = (d: AgentDeployment, graphId: string): Promise<CompiledGraphLike> =>
  graphOf(d, graphId);

// LangGraph.js keeps a run's config metadata out of checkpoint metadata; the reference server (and
// deleteByRunId, which finds a run's checkpoints by metadata.run_id) needs run_id, graph_id, … recorded there.
const tagged = new WeakMap<object, object>();
function taggingSaver(saver: any): any {
  let proxy = tagged.get(saver) as object | undefined;
  if (!proxy) {
    proxy = new Proxy(saver, {
      get(target, prop) {
        if (prop === "put")
          return (config: any, checkpoint: unknown, metadata: any, versions: unknown) =>
            track(config, target.put(config, checkpoint, { ...runMetadata(config), ...metadata }, versions));
        if (prop === "putWrites")
          return (config: any, ...rest: unknown[]) => track(config, target.putWrites(config, ...rest));
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    tagged.set(saver, proxy as object);
  }
  return proxy;
}

// Writes still in flight per run: an aborted graph.stream returns before its last puts land, and a rollback
// must delete those too, so it waits for them (and repeats while new ones appear).
const inflight = new Map<string, { pending: Set<Promise<unknown>>; started: number }>();
function track<T>(config: any, p: Promise<T>): Promise<T> {
  const runId = config?.metadata?.run_id ?? config?.configurable?.run_id;
  if (typeof runId !== "string") return p;
  const entry = inflight.get(runId) ?? { pending: new Set<Promise<unknown>>(), started: 0 };
  inflight.set(runId, entry);
  entry.started++;
  entry.pending.add(p);
  const done = () => entry.pending.delete(p);
  p.then(done, done);
  return p;
}

/** Runs `step` after the run's writes settled, again while more writes started meanwhile. */
export async function afterRunWrites(runId: string, step: () => Promise<unknown>): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const w = inflight.get(runId);
    const seen = w?.started ?? 0;
    while (w?.pending.size) await Promise.allSettled([...w.pending]);
    await step();
    await new Promise((r) => setTimeout(r, 50));
    if ((inflight.get(runId)?.started ?? 0) === seen) break;
  }
}

export const forgetRunWrites = (runId: string) => inflight.delete(runId);

function runMetadata(config: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...(config?.metadata ?? {}) }))
    if (!k.startsWith("ls_") && !k.startsWith("__") && ["string", "number", "boolean"].includes(typeof v))
      out[k] = v;
  return out;
}

/** The graph with a checkpointer that records the run's metadata in every checkpoint it writes. */
export function withRunTagging(graph: CompiledGraphLike): CompiledGraphLike {
  const g = Object.create(graph) as CompiledGraphLike;
  g.checkpointer = taggingSaver(graph.checkpointer);
  return g;
}
