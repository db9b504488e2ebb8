import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { materializeArtifact } from "../control/artifacts.ts";
import type { ArtifactManifest } from "../deploy/bundle.ts";
import { ServiceUnavailable } from "../errors.ts";
import type { AgentDeployment } from "./context.ts";

// The graphs a deployment serves, loaded in-process from its active revision's artifact (the bundles the
// build step made), with the platform's checkpointer and store attached. A graph bundle carries its own copy
// of @langchain/langgraph, so graphs are recognised by shape, never with instanceof (DESIGN.md, traps).

/** What the agent server needs of a compiled graph (the subset of CompiledStateGraph it calls). */
export interface CompiledGraphLike {
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
  stream(input: unknown, config?: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getGraphAsync?(
    config?: Record<string, unknown>,
  ): Promise<{ toJSON(): unknown; nodes: Record<string, unknown> }>;
  getGraph?(config?: Record<string, unknown>): { toJSON(): unknown; nodes: Record<string, unknown> };
  getState(config: Record<string, unknown>, options?: Record<string, unknown>): Promise<any>;
  getStateHistory(config: Record<string, unknown>, options?: Record<string, unknown>): AsyncIterable<any>;
  updateState(config: Record<string, unknown>, values: unknown, asNode?: string): Promise<any>;
  checkpointer?: unknown;
  store?: unknown;
  builder?: unknown;
  [k: string]: unknown;
}

export interface LoadedGraph {
  graph_id: string;
  graph: CompiledGraphLike;
  description?: string;
}

const isCompiled = (g: any): g is CompiledGraphLike =>
  g != null &&
  typeof g.invoke === "function" &&
  (typeof g.getGraphAsync === "function" || typeof g.getGraph === "function");
const isBuilder = (g: any) => g != null && typeof g === "object" && typeof g.compile === "function";

/** A graph export as the LangGraph API server accepts it: compiled, a builder to compile, or a factory. */
export async function resolveGraphExport(value: unknown): Promise<CompiledGraphLike> {
  let g: any = value;
  if (typeof g === "function" && !isCompiled(g)) g = await g({ configurable: {} });
  g = await g;
  if (!isCompiled(g) && isBuilder(g)) g = await g.compile();
  if (!isCompiled(g)) throw new Error("the export is not a LangGraph graph");
  return g;
}

const loaded = new Map<string, Promise<Map<string, LoadedGraph>>>();

/** Loads (once per artifact) every graph of a manifest found in `dir`. */
export async function loadArtifactGraphs(
  dir: string,
  attach: { checkpointer: BaseCheckpointSaver; store: BaseStore },
  env: Record<string, string> = {},
): Promise<Map<string, LoadedGraph>> {
  const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  // Graphs read their configuration and secrets from the environment, often at import time.
  for (const [k, v] of Object.entries({ ...manifest.env, ...env })) process.env[k] = v;
  const out = new Map<string, LoadedGraph>();
  for (const [graphId, entry] of Object.entries(manifest.graphs)) {
    const mod = await import(pathToFileURL(join(dir, entry.file)).href);
    const graph = await resolveGraphExport(mod[entry.export_name]);
    graph.checkpointer = attach.checkpointer;
    graph.store = attach.store;
    out.set(graphId, { graph_id: graphId, graph, description: entry.description });
  }
  return out;
}

/** The graphs of the deployment's active revision (cached per revision: a new revision loads fresh). */
export function deploymentGraphs(d: AgentDeployment): Promise<Map<string, LoadedGraph>> {
  const key = d.artifact_prefix ?? d.artifact_dir ?? "";
  let p = loaded.get(key);
  if (!p) {
    p = (async () => {
      const dir = d.artifact_dir ?? (await materializeArtifact(d.artifact_prefix!));
      return loadArtifactGraphs(dir, { checkpointer: d.checkpointer(), store: d.store() }, await d.secrets());
    })();
    p.catch(() => loaded.delete(key));
    loaded.set(key, p);
  }
  return p.catch((err) => {
    throw new ServiceUnavailable(`The deployment's graphs could not be loaded: ${(err as Error).message}`);
  });
}
