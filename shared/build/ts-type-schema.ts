import {
  type Checker,
  ObjectFlags,
  SignatureKind,
  SymbolFlags,
  type Type,
  TypeFlags,
  type TypeReference,
} from "typescript/unstable/async";

// A TypeScript type (read through the compiler's API) as JSON Schema draft-07, the way the reference server's
// build-time extractor serves graph types: string-literal unions become enums, optional members are left out of
// `required`, methods are skipped, and LangGraph messages point at one BaseMessage definition.

export type JsonSchema = Record<string, unknown>;

/** The marker interface the reflection file maps LangGraph messages onto (ts-schemas.ts). */
export const MESSAGE_MARKER = "__LangGraphMessage";

/** A message as the agent server exchanges it: LangChain's serialised BaseMessage fields. */
export const BASE_MESSAGE: JsonSchema = {
  type: "object",
  properties: {
    type: { type: "string" },
    content: {
      anyOf: [{ type: "string" }, { type: "array", items: { type: "object", additionalProperties: true } }],
    },
    id: { type: "string" },
    name: { type: "string" },
    additional_kwargs: { type: "object", additionalProperties: true },
    response_metadata: { type: "object", additionalProperties: true },
    tool_calls: { type: "array", items: { type: "object", additionalProperties: true } },
    tool_call_id: { type: "string" },
  },
  required: ["content"],
};

const MAX_DEPTH = 8;
const has = (t: Type, f: TypeFlags) => (t.flags & f) !== 0;

/** Converts types of one checker; `usedMessages` says whether the result needs the BaseMessage definition. */
export class TypeSchemaWriter {
  usedMessages = false;
  private readonly visiting = new Set<number>();
  /** `stopped` is asked before each type is read: the extraction's time budget ends the walk. */
  constructor(
    private readonly checker: Checker,
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** The schema of `t`, with `definitions` when messages appear in it. */
  async root(t: Type): Promise<JsonSchema> {
    this.usedMessages = false;
    const schema = await this.schema(t, 0);
    return this.usedMessages ? { ...schema, definitions: { BaseMessage: BASE_MESSAGE } } : schema;
  }

  private async schema(t: Type, depth: number): Promise<JsonSchema> {
    if (this.stopped()) throw new Error("stopped");
    if (depth > MAX_DEPTH || has(t, TypeFlags.AnyOrUnknown)) return {};
    if (has(t, TypeFlags.String | TypeFlags.TemplateLiteral | TypeFlags.StringMapping))
      return { type: "string" };
    if (has(t, TypeFlags.Number)) return { type: "number" };
    if (has(t, TypeFlags.BigInt | TypeFlags.BigIntLiteral)) return { type: "integer" };
    if (has(t, TypeFlags.Boolean)) return { type: "boolean" };
    if (has(t, TypeFlags.Null)) return { type: "null" };
    if (t.isLiteralType()) return literal(t.value);
    if (t.isUnionType()) return this.union(await t.getTypes(), depth);
    if (has(t, TypeFlags.Object | TypeFlags.Intersection)) return this.object(t, depth);
    return {};
  }

  private async union(members: readonly Type[], depth: number): Promise<JsonSchema> {
    const kept = members.filter((m) => !has(m, TypeFlags.Undefined | TypeFlags.Void | TypeFlags.Never));
    const bools = kept.filter((m) => has(m, TypeFlags.BooleanLiteral));
    const rest = bools.length === 2 ? kept.filter((m) => !has(m, TypeFlags.BooleanLiteral)) : kept;
    const schemas = await Promise.all(rest.map((m) => this.schema(m, depth + 1)));
    if (bools.length === 2) schemas.push({ type: "boolean" });
    if (schemas.length === 1) return schemas[0];
    if (schemas.some((s) => Object.keys(s).length === 0)) return {};
    const consts = schemas.map((s) => s.const);
    if (consts.every((c) => typeof c === "string")) return { type: "string", enum: consts };
    if (consts.every((c) => typeof c === "number")) return { type: "number", enum: consts };
    if (schemas.every((s) => Object.keys(s).length === 1 && typeof s.type === "string"))
      return { type: [...new Set(schemas.map((s) => s.type))] };
    return { anyOf: schemas };
  }

  private async object(t: Type, depth: number): Promise<JsonSchema> {
    const c = this.checker;
    const symbol = await t.getSymbol();
    if (symbol?.name === MESSAGE_MARKER) {
      this.usedMessages = true;
      return { $ref: "#/definitions/BaseMessage" };
    }
    if (symbol?.name === "Date") return { type: "string", format: "date-time" };
    if (await c.isArrayType(t)) {
      const [item] = await c.getTypeArguments(t as TypeReference);
      return { type: "array", items: item ? await this.schema(item, depth + 1) : {} };
    }
    if (await c.isTupleType(t)) {
      const members = await c.getTypeArguments(t as TypeReference);
      return { type: "array", items: await Promise.all(members.map((i) => this.schema(i, depth + 1))) };
    }
    if (this.visiting.has(t.id)) return {};
    this.visiting.add(t.id);
    try {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const p of await c.getPropertiesOfType(t)) {
        if (p.flags & SymbolFlags.Method || p.name.startsWith("__@")) continue;
        const pt = await c.getTypeOfSymbol(p);
        if (!pt || (await isFunction(c, pt))) continue;
        const schema = await this.schema(pt, depth + 1);
        const doc = await c.getDocumentationCommentOfSymbol(p).catch(() => "");
        properties[p.name] = doc ? { ...schema, description: doc } : schema;
        if (!(p.flags & SymbolFlags.Optional) && !(await includesUndefined(pt))) required.push(p.name);
      }
      const out: JsonSchema = { type: "object", properties };
      if (required.length) out.required = required;
      const [index] = await c.getIndexInfosOfType(t);
      if (index) out.additionalProperties = await this.schema(index.valueType, depth + 1);
      return out;
    } finally {
      this.visiting.delete(t.id);
    }
  }
}

function literal(value: string | number | boolean | bigint): JsonSchema {
  if (typeof value === "bigint") return { type: "integer", const: Number(value) };
  return { type: typeof value as "string" | "number" | "boolean", const: value };
}

async function includesUndefined(t: Type): Promise<boolean> {
  if (has(t, TypeFlags.Undefined | TypeFlags.Void)) return true;
  return t.isUnionType() && (await t.getTypes()).some((m) => has(m, TypeFlags.Undefined | TypeFlags.Void));
}

/** A callable without properties of its own: a node function or method, not data. */
async function isFunction(c: Checker, t: Type): Promise<boolean> {
  if (!t.isObjectType() || t.objectFlags & ObjectFlags.Reference) return false;
  if (!(await c.getSignaturesOfType(t, SignatureKind.Call)).length) return false;
  return (await c.getPropertiesOfType(t)).length === 0;
}
