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
// `required`, methods are skipped, and LangGraph messages point at the BaseMessage definition (the union of the
// message classes, ts-message-classes.ts).

export type JsonSchema = Record<string, unknown>;

/** The marker interface the reflection file maps LangGraph messages onto (ts-schemas.ts). */
export const MESSAGE_MARKER = "__LangGraphMessage";

const MAX_DEPTH = 8;
/** Symbols of types that have no name of their own: an object literal's, a mapped or anonymous type's. */
const UNNAMED = new Set(["__type", "__object", "Array", "ReadonlyArray", "Date"]);
const has = (t: Type, f: TypeFlags) => (t.flags & f) !== 0;

/** The definitions messages refer to (ts-message-classes.ts), written once per writer. */
export type MessageDefinitions = () => Promise<Record<string, JsonSchema>>;

/** Converts types of one checker; `usedMessages` says whether the result needs the BaseMessage definition. */
export class TypeSchemaWriter {
  usedMessages = false;
  /** With `named`: each named type below the top (a class, an interface, an alias) as a definition of its own. */
  readonly definitions: Record<string, JsonSchema> = {};
  private readonly visiting = new Set<number>();
  private readonly names = new Map<number, string>();
  private messageDefinitions?: Promise<Record<string, JsonSchema>>;
  /**
   * `stopped` is asked before each type is read: the extraction's time budget ends the walk. `messages` writes
   * the definitions a schema holding messages refers to (once: every schema of the writer shares them). `named`:
   * a named type is written once into `definitions` and referred to (`$ref`), as the reference's generator does.
   */
  constructor(
    private readonly checker: Checker,
    private readonly stopped: () => boolean = () => false,
    private readonly messages?: MessageDefinitions,
    private readonly named = false,
  ) {}

  /** The schema of `t`, with `definitions` when messages appear in it. */
  async root(t: Type): Promise<JsonSchema> {
    this.usedMessages = false;
    const schema = await this.schema(t, 0);
    if (!this.usedMessages) return schema;
    this.messageDefinitions ??= this.messages ? this.messages() : Promise.resolve({});
    const definitions = await this.messageDefinitions;
    return { ...schema, definitions: Object.keys(definitions).length ? definitions : { BaseMessage: {} } };
  }

  /** The schema of `t` itself (named or not), its named parts in `definitions` when the writer is `named`. */
  body(t: Type): Promise<JsonSchema> {
    return this.schema(t, 0);
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
    if (t.isUnionType() || has(t, TypeFlags.Object | TypeFlags.Intersection)) {
      const name = this.named && depth > 0 ? await this.nameOf(t) : undefined;
      if (name) return this.ref(name, t);
      if (t.isUnionType()) return this.union(await t.getTypes(), depth);
      return this.object(t, depth);
    }
    return {};
  }

  /** A named type's definition key: its name as the checker prints it. */
  private async nameOf(t: Type): Promise<string | undefined> {
    const known = this.names.get(t.id);
    if (known) return known;
    const alias = await t.getAliasSymbol();
    const symbol = alias ?? (await t.getSymbol());
    if (!symbol || UNNAMED.has(symbol.name) || symbol.name === MESSAGE_MARKER) return undefined;
    if (!alias && !(symbol.flags & (SymbolFlags.Class | SymbolFlags.Interface))) return undefined;
    if (!alias && ((await this.checker.isArrayType(t)) || (await this.checker.isTupleType(t))))
      return undefined;
    // Qualified by the namespace it is declared in (ContentBlock.Text), as the generator names it.
    const parent = await symbol.getParent();
    const qualifier =
      parent && parent.flags & SymbolFlags.Namespace && !parent.name.startsWith('"') ? parent.name : "";
    const printed = `${qualifier ? `${qualifier}.` : ""}${await this.checker.typeToString(t)}`
      .replace(/import\("[^"]*"\)\./g, "")
      .replace(/\s+/g, "")
      .replace(/[~/]/g, "_");
    // Types printed alike (instantiations of one declaration) are one definition, as the generator keys them.
    this.names.set(t.id, printed);
    return printed;
  }

  private async ref(name: string, t: Type): Promise<JsonSchema> {
    if (!(name in this.definitions)) {
      this.definitions[name] = {};
      this.definitions[name] = t.isUnionType()
        ? await this.union(await t.getTypes(), 1)
        : await this.object(t, 1);
    }
    return { $ref: `#/definitions/${name}` };
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
