import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { ArtifactManifest } from "../../build/bundle.ts";
import { redactor } from "../../build/exec.ts";
import { readSchemasFile } from "../../build/schemas-file.ts";
import { processEnvironment } from "../../config.ts";
import { logger } from "../../log.ts";
import { attachExtractedSchemas } from "../assistants/graph-schemas.ts";
import type { CompiledGraphLike, GraphSlot } from "../deployment/graphs.ts";
import { registerSdkLogger } from "./sdk-logger.ts";

// Importing a deployment's code: this module is reached only from a deployment's runtime (serve.ts).

const isCompiled = (v: unknown): v is CompiledGraphLike => {
  const g = v as Partial<CompiledGraphLike> | null | undefined;
  return (
    g != null &&
    typeof g.invoke === "function" &&
    (typeof g.getGraphAsync === "function" || typeof g.getGraph === "function")
  );
};
const isBuilder = (g: unknown): g is { compile(): unknown } =>
  g != null && typeof g === "object" && typeof (g as { compile?: unknown }).compile === "function";

/** A graph export that is a factory: called with a run's config (and runtime) to build that run's graph. */
const isFactory = (v: unknown): v is (config: unknown, runtime?: unknown) => unknown =>
  typeof v === "function" && !isCompiled(v);

/**
 * A graph export as the LangGraph API server accepts it: compiled, a builder to compile, or a factory (called
 * with `config` and `runtime`; without a run, with an empty config).
 */
async function resolveGraphExport(
  value: unknown,
  config: Record<string, unknown> = { configurable: {} },
  runtime?: Record<string, unknown>,
): Promise<CompiledGraphLike> {
  let g: unknown = value;
  if (isFactory(g)) g = await g(config, runtime);
  g = await g;
  if (!isCompiled(g) && isBuilder(g)) g = await g.compile();
  if (!isCompiled(g)) throw new Error("the export is not a LangGraph graph");
  return g;
}

/** The first line of an error, as the deploy log reports a graph's failure. */
const firstLine = (e: unknown): string => {
  const text = e instanceof Error ? e.message || e.name : String(e);
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find(Boolean) ?? "unknown error"
  );
};

/** Imports one graph's module and resolves its export; throws with the reason the deploy log gives. */
async function importGraph(
  dir: string,
  entry: ArtifactManifest["graphs"][string],
): Promise<{ exported: unknown; graph: CompiledGraphLike }> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(join(dir, entry.file)).href);
  } catch (e) {
    throw new Error(`import failed: ${firstLine(e)}`);
  }
  const exported = mod[entry.export_name];
  if (exported === undefined) throw new Error(`export ${entry.export_name} not found`);
  try {
    return { exported, graph: await resolveGraphExport(exported) };
  } catch (e) {
    throw new Error(firstLine(e));
  }
}

/**
 * Imports every graph of the artifact in `dir`. The graphs' environment (langgraph.json env and the
 * deployment's secrets) is the runtime process's own, set when it was started. A graph that throws at import
 * or exports no graph is kept as a failure with its reason (its assistants answer it); the others serve.
 */
export async function loadArtifactGraphs(
  dir: string,
  attach: { checkpointer: BaseCheckpointSaver; store: BaseStore },
): Promise<Map<string, GraphSlot>> {
  const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  const typed = await readSchemasFile(dir);
  const out = new Map<string, GraphSlot>();
  registerSdkLogger();
  for (const [graphId, entry] of Object.entries(manifest.graphs)) {
    let imported: Awaited<ReturnType<typeof importGraph>>;
    try {
      imported = await importGraph(dir, entry);
    } catch (e) {
      // The reason is answered to clients and logged: no value of the runtime's environment (the deployment's
      // secrets among them) goes with it, whatever the graph put into its error.
      const error = redactor(Object.values(processEnvironment()).filter((v) => (v?.length ?? 0) >= 8))(
        (e as Error).message,
      );
      logger.error("a graph failed to load; the deployment's other graphs serve", {
        graph_id: graphId,
        error,
      });
      out.set(graphId, { graph_id: graphId, error });
      continue;
    }
    const { exported } = imported;
    const attached = (g: CompiledGraphLike) => Object.assign(g, attach);
    const graph = attached(imported.graph);
    attachExtractedSchemas(graph, typed[graphId]);
    // A factory builds each run's graph from that run's config, as the reference server calls it; the graph
    // built at load (empty config) answers the assistant endpoints (schemas, drawing) and state reads.
    const build = isFactory(exported)
      ? async (config: Record<string, unknown>) =>
          attached(
            await resolveGraphExport(exported, config, {
              context: config.context,
              store: attach.store,
            }),
          )
      : undefined;
    out.set(graphId, {
      graph_id: graphId,
      graph,
      description: entry.description,
      ...(build ? { build } : {}),
    });
  }
  return out;
}
