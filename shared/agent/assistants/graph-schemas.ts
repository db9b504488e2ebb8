import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { ExtractedSchemas, GraphTypeSchemas } from "../../build/schemas-file.ts";
import { NotFound } from "../../errors.ts";
import type { CompiledGraphLike } from "../deployment/graphs.ts";

// What an assistant's graph looks like from outside: the drawable graph, JSON schemas of its state, input,
// output and config, and its subgraphs. Each schema is, first found:
// - derived at runtime from the compiled graph: zod state / input / output / config (StateGraph(z.object(…)),
//   {input, output, context}, zod v3 or v4) with LangGraph's registry metadata (withLangGraph / registry
//   `jsonSchemaExtra`, as LangGraph's own zod schema helpers apply it), or a StateSchema's own JSON schemas;
// - extracted at build time from the graph's TypeScript types (shared/build/ts-schemas.ts, the artifact's
//   schemas.json, attached at load by runtime/load-graphs.ts): Annotation state, input, output and config
//   annotation, and subgraphs' by namespace;
// - for state, input and output: the channel names as properties, each unconstrained ({}).
// config_schema is also served as context_schema (to LangGraph.js they are one schema, as the reference says).
// Anything else is null, as the SDK's GraphSchema allows.

type JsonSchema = Record<string, unknown>;
export interface GraphSchemas {
  graph_id: string;
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema: JsonSchema | null;
  context_schema: JsonSchema | null;
}

interface BuilderLike {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
  _metaRegistry?: MetaRegistry;
}

/** LangGraph's zod metadata registry (the graph's own copy): rewrites a schema's fields with their metadata. */
interface MetaRegistry {
  getExtendedChannelSchemas(schema: unknown, effects: Record<string, boolean>): unknown;
}

const extracted = new WeakMap<object, ExtractedSchemas>();
/** Attaches the build-time schemas of `graph` (its entry of the artifact's schemas.json). */
export function attachExtractedSchemas(
  graph: CompiledGraphLike,
  schemas: ExtractedSchemas | undefined,
): void {
  if (schemas) extracted.set(graph, schemas);
}

const isZodLike = (s: unknown) => s != null && typeof s === "object" && ("_zod" in s || "_def" in s);
const isStateSchema = (s: unknown): s is { getJsonSchema(): JsonSchema; getInputJsonSchema(): JsonSchema } =>
  s != null &&
  typeof s === "object" &&
  typeof (s as { getJsonSchema?: unknown }).getJsonSchema === "function" &&
  typeof (s as { getInputJsonSchema?: unknown }).getInputJsonSchema === "function";

// The field rewrites LangGraph's own schema helpers ask of the registry: metadata as "lg:{…}" descriptions; an
// input takes a field's reducer input schema and is partial.
const EXTRAS = { withJsonSchemaExtrasAsDescription: true };
const INPUT = { withJsonSchemaExtrasAsDescription: true, withReducerSchema: true, asPartial: true };
const EXTRAS_PREFIX = "lg:";

/** A description "lg:{…}" (the registry's `jsonSchemaExtra` and the field's own description) spread in place. */
function applyExtras(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(applyExtras);
  if (schema == null || typeof schema !== "object") return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, applyExtras(v)]));
  if (typeof out.description === "string" && out.description.startsWith(EXTRAS_PREFIX)) {
    const { description, ...rest } = out as { description: string };
    try {
      return { ...rest, ...JSON.parse(description.slice(EXTRAS_PREFIX.length)) };
    } catch {
      return out;
    }
  }
  return out;
}

/** A JSON schema of a runtime definition, with the registry's field metadata; `input`: every field optional. */
function fromRuntime(def: unknown, registry: MetaRegistry | undefined, input = false): JsonSchema | null {
  try {
    if (isStateSchema(def)) return input ? def.getInputJsonSchema() : def.getJsonSchema();
    if (!isZodLike(def)) return null;
    let extended: unknown = def;
    try {
      extended = registry?.getExtendedChannelSchemas(def, input ? INPUT : EXTRAS) ?? def;
    } catch {
      // Not an object schema the registry can walk: the schema as it is.
    }
    const schema = applyExtras(toJsonSchema(extended as never)) as JsonSchema;
    if (input) delete schema.required;
    return schema;
  } catch {
    return null;
  }
}

/** The channel names of an Annotation definition as an object schema of unconstrained properties. */
function fromChannels(channels: Record<string, unknown> | undefined): JsonSchema | null {
  if (!channels || typeof channels !== "object") return null;
  const properties = Object.fromEntries(Object.keys(channels).map((k) => [k, {}]));
  return { type: "object", properties };
}

/** The draft the reference's schemas name; ours from types and channels are written to it. */
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/** A schema as the reference answers it: with `$schema` (the converter's own, else draft-07). */
const withDraft = (schema: JsonSchema | null): JsonSchema | null =>
  schema && (schema.$schema ? schema : { $schema: DRAFT_07, ...schema });

/** The graph's schemas; `fromTypes` are its build-time schemas (by default those attached to `graph`). */
export function graphSchemas(
  graphId: string,
  graph: CompiledGraphLike,
  fromTypes: GraphTypeSchemas | undefined = extracted.get(graph),
): GraphSchemas {
  const b = (graph.builder ?? {}) as BuilderLike;
  const registry = b._metaRegistry;
  const state = b._schemaRuntimeDefinition;
  // A symbol (the library's "partial state" marker) or nothing: input is the state, all optional.
  const inputDef = typeof b._inputRuntimeDefinition === "object" ? b._inputRuntimeDefinition : state;
  const outputDef = typeof b._outputRuntimeDefinition === "object" ? b._outputRuntimeDefinition : state;
  const config = withDraft(fromRuntime(b._configRuntimeSchema, registry) ?? fromTypes?.config ?? null);
  return {
    graph_id: graphId,
    state_schema: withDraft(
      fromRuntime(state, registry) ?? fromTypes?.state ?? fromChannels(b._schemaDefinition),
    ),
    input_schema: withDraft(
      fromRuntime(inputDef, registry, true) ??
        fromTypes?.input ??
        fromChannels(b._inputDefinition ?? b._schemaDefinition),
    ),
    output_schema: withDraft(
      fromRuntime(outputDef, registry) ??
        fromTypes?.output ??
        fromChannels(b._outputDefinition ?? b._schemaDefinition),
    ),
    config_schema: config,
    context_schema: config,
  };
}

/** The drawable graph (nodes and edges) as the reference's GET /assistants/{id}/graph returns it. */
export async function drawGraph(
  graph: CompiledGraphLike,
  config: Record<string, unknown>,
  xray: boolean | number | undefined,
): Promise<unknown> {
  const opts = { ...config, ...(xray !== undefined ? { xray } : {}) };
  const drawable = graph.getGraphAsync ? await graph.getGraphAsync(opts) : graph.getGraph?.(opts);
  if (!drawable) throw new NotFound("The graph cannot be drawn");
  return drawable.toJSON();
}

type SubgraphSource = {
  getSubgraphsAsync?: (ns?: string, recurse?: boolean) => AsyncIterable<[string, CompiledGraphLike]>;
  getSubgraphs?: (ns?: string, recurse?: boolean) => Iterable<[string, CompiledGraphLike]>;
};

/** A subgraph's schemas as the LangGraph.js server answers GET /assistants/{id}/subgraphs: keyed by their role. */
export interface SubgraphSchemas {
  state: JsonSchema | null;
  input: JsonSchema | null;
  output: JsonSchema | null;
  config: JsonSchema | null;
}

/** Schemas of the graph's subgraphs by namespace (only those under `namespace` when given). */
export async function subgraphSchemas(
  graphId: string,
  graph: CompiledGraphLike,
  namespace?: string,
  recurse = false,
): Promise<Record<string, SubgraphSchemas>> {
  const g = graph as unknown as SubgraphSource;
  const out: Record<string, SubgraphSchemas> = {};
  const found = g.getSubgraphsAsync
    ? g.getSubgraphsAsync(namespace, recurse)
    : (g.getSubgraphs?.(namespace, recurse) ?? []);
  const fromTypes = extracted.get(graph)?.subgraphs;
  for await (const [ns, sub] of found) {
    const s = graphSchemas(graphId, sub, fromTypes?.[ns]);
    out[ns] = {
      state: s.state_schema,
      input: s.input_schema,
      output: s.output_schema,
      config: s.config_schema,
    };
  }
  return out;
}
