import { GraphLoadFailed, NotFound, ServiceUnavailable } from "../../errors.ts";

// The graphs a deployment serves, imported from its revision's artifact (the bundles the build step made), with
// the platform's checkpointer and store attached. Only a deployment's own runtime imports them
// (runtime/load-graphs.ts, reached through the `loadGraphs` runtime/serve.ts gives its deployment); platform
// processes never do. A graph bundle carries its own copy of
// @langchain/langgraph, so graphs are recognised by shape, never with instanceof (DESIGN.md, traps).

/** What the agent server reads of a graph's state (the subset of LangGraph's StateSnapshot it maps). */
export interface StateSnapshotLike {
  values?: unknown;
  next?: string[];
  tasks?: StateTaskLike[];
  config?: unknown;
  metadata?: unknown;
  createdAt?: string;
  parentConfig?: unknown;
}
/** A task of a state snapshot; its `state` is a subgraph's config, or its snapshot when subgraphs are read. */
export interface StateTaskLike {
  id: string;
  name: string;
  /** Where the task came from (e.g. ["__pregel_pull", "node"]), as LangGraph describes it. */
  path?: unknown[];
  error?: unknown;
  interrupts?: unknown[];
  state?: StateSnapshotLike & { configurable?: unknown };
  result?: unknown;
}

/** What the agent server needs of a compiled graph (the subset of CompiledStateGraph it calls). */
export interface CompiledGraphLike {
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
  stream(input: unknown, config?: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getGraphAsync?(
    config?: Record<string, unknown>,
  ): Promise<{ toJSON(): unknown; nodes: Record<string, unknown> }>;
  getGraph?(config?: Record<string, unknown>): { toJSON(): unknown; nodes: Record<string, unknown> };
  getState(config: Record<string, unknown>, options?: Record<string, unknown>): Promise<StateSnapshotLike>;
  getStateHistory(
    config: Record<string, unknown>,
    options?: Record<string, unknown>,
  ): AsyncIterable<StateSnapshotLike>;
  /** Answers the config of the checkpoint it wrote. */
  updateState(config: Record<string, unknown>, values: unknown, asNode?: string): Promise<unknown>;
  checkpointer?: unknown;
  store?: unknown;
  builder?: unknown;
  [k: string]: unknown;
}

export interface LoadedGraph {
  graph_id: string;
  graph: CompiledGraphLike;
  description?: string;
  /** An exported factory: builds a run's graph from that run's config (per run, as the reference server does). */
  build?: (config: Record<string, unknown>) => Promise<CompiledGraphLike>;
}

/** A graph of the revision that threw at import or exported no graph: the others serve without it. */
export interface FailedGraph {
  graph_id: string;
  /** Why, as the deploy log says it ("import failed: …", "not a graph"). */
  error: string;
}
export type GraphSlot = LoadedGraph | FailedGraph;
export const isFailed = (g: GraphSlot): g is FailedGraph => "error" in g;

/** What serves a deployment's graphs (deployment.ts AgentDeployment). */
export interface ServesGraphs {
  /** The deployment's compiled graphs: set only inside its runtime. */
  loadGraphs?: () => Promise<Map<string, GraphSlot>>;
}

/** The deployment's graphs: only its runtime can load them. */
export function deploymentGraphs(d: ServesGraphs): Promise<Map<string, GraphSlot>> {
  if (!d.loadGraphs)
    throw new ServiceUnavailable("The deployment's graphs are served by its runtime, not by this process");
  return d.loadGraphs().catch((err) => {
    throw new ServiceUnavailable(`The deployment's graphs could not be loaded: ${(err as Error).message}`);
  });
}

/** One graph of the deployment: 404 when the revision does not serve it, 409 when it failed to load. */
export async function loadedGraph(d: ServesGraphs, graphId: string): Promise<LoadedGraph> {
  const slot = (await deploymentGraphs(d)).get(graphId);
  if (!slot) throw new NotFound(`Graph "${graphId}" not found`);
  if (isFailed(slot)) throw new GraphLoadFailed(graphId, slot.error);
  return slot;
}

/** The graph a run executes: a factory export builds it from the run's config, else the loaded graph. */
export async function graphForRun(
  d: ServesGraphs,
  graphId: string,
  config: Record<string, unknown>,
): Promise<CompiledGraphLike> {
  const loaded = await loadedGraph(d, graphId);
  return loaded.build ? loaded.build(config) : loaded.graph;
}
