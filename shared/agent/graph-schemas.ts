import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { NotFound } from "../errors.ts";
import type { CompiledGraphLike } from "./graphs.ts";

// What an assistant's graph looks like from outside: the drawable graph, JSON schemas of its state, input,
// output and context, and its subgraphs. Derived at runtime from the compiled graph (the reference server also
// parses TypeScript sources; we do not):
// - zod state / input / output / context (StateGraph(z.object(…)), {input, output, context}) → full schemas;
// - StateSchema state → its own JSON schemas;
// - Annotation state → an object with the channel names as properties, each unconstrained ({}), since an
//   Annotation carries no runtime types;
// - config_schema → null (LangGraph.js v1 graphs declare `context`, served as context_schema).
// Anything that cannot be derived is null, as the SDK's GraphSchema allows.

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
}

const isZodLike = (s: unknown) => s != null && typeof s === "object" && ("_zod" in s || "_def" in s);
const isStateSchema = (s: unknown): s is { getJsonSchema(): JsonSchema; getInputJsonSchema(): JsonSchema } =>
  s != null &&
  typeof s === "object" &&
  typeof (s as { getJsonSchema?: unknown }).getJsonSchema === "function" &&
  typeof (s as { getInputJsonSchema?: unknown }).getInputJsonSchema === "function";

/** A JSON schema of a runtime definition; `input` makes every property optional (input is a partial update). */
function fromRuntime(def: unknown, input: boolean): JsonSchema | null {
  try {
    if (isStateSchema(def)) return input ? def.getInputJsonSchema() : def.getJsonSchema();
    if (!isZodLike(def)) return null;
    const { $schema: _s, ...schema } = toJsonSchema(def as never) as JsonSchema;
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

export function graphSchemas(graphId: string, graph: CompiledGraphLike): GraphSchemas {
  const b = (graph.builder ?? {}) as BuilderLike;
  const state = b._schemaRuntimeDefinition;
  // A symbol (the library's "partial state" marker) or nothing: input is the state, all optional.
  const inputDef = typeof b._inputRuntimeDefinition === "object" ? b._inputRuntimeDefinition : state;
  const outputDef = typeof b._outputRuntimeDefinition === "object" ? b._outputRuntimeDefinition : state;
  return {
    graph_id: graphId,
    state_schema: fromRuntime(state, false) ?? fromChannels(b._schemaDefinition),
    input_schema: fromRuntime(inputDef, true) ?? fromChannels(b._inputDefinition ?? b._schemaDefinition),
    output_schema: fromRuntime(outputDef, false) ?? fromChannels(b._outputDefinition ?? b._schemaDefinition),
    config_schema: null,
    context_schema: fromRuntime(b._configRuntimeSchema, false),
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

/** Schemas of the graph's subgraphs by namespace (only those under `namespace` when given). */
export async function subgraphSchemas(
  graphId: string,
  graph: CompiledGraphLike,
  namespace?: string,
  recurse = false,
): Promise<Record<string, GraphSchemas>> {
  const g = graph as unknown as SubgraphSource;
  const out: Record<string, GraphSchemas> = {};
  const found = g.getSubgraphsAsync
    ? g.getSubgraphsAsync(namespace, recurse)
    : (g.getSubgraphs?.(namespace, recurse) ?? []);
  for await (const [ns, sub] of found) out[ns] = graphSchemas(graphId, sub);
  return out;
}
