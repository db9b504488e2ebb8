import {
  type Checker,
  type InterfaceType,
  type Program,
  SignatureKind,
  type Symbol as TsSymbol,
  type Type,
  TypeFlags,
} from "typescript/unstable/async";
import type { JsonSchema } from "./ts-type-schema.ts";

// The `definitions` a schema that holds LangGraph messages refers to, as the reference server's extractor writes
// them (a TypeScript-to-JSON-Schema generator run over the graph's program): one definition per message class of
// the graph's own @langchain/core, by its bare name, with its documentation comment. An abstract class that other
// classes extend is the union (`oneOf`) of the classes extending it directly (BaseMessage: BaseMessageChunk,
// AIMessage, HumanMessage, …), in the order the program declares them; any other class is an object of its data
// properties (methods left out, no `required`, as the generator's defaults have it).

/** The root of the message classes, the definition `#/definitions/BaseMessage` names. */
export const BASE_MESSAGE = "BaseMessage";

interface MessageClass {
  name: string;
  base: string | undefined;
  abstract: boolean;
  description: string;
  instance: Type;
  /** Where the program declares it: the file's position among the program's files, then the node's. */
  order: [number, number];
}

/**
 * The definitions of the message classes in `classes` (the reflection module's map of @langchain/core/messages
 * exports to their instance types); `write` is the schema of a type. Empty when no BaseMessage is among them.
 */
export async function messageClassDefinitions(
  checker: Checker,
  program: Program,
  classes: Type,
  write: (t: Type) => Promise<JsonSchema>,
): Promise<Record<string, JsonSchema>> {
  const files = await program.getSourceFileNames();
  const found = new Map<string, MessageClass>();
  for (const p of await checker.getPropertiesOfType(classes)) {
    const instance = await checker.getTypeOfSymbol(p);
    if (!instance || instance.flags & TypeFlags.Never) continue;
    const symbol = await instance.getSymbol();
    if (!symbol || found.has(symbol.name)) continue;
    found.set(symbol.name, await describe(checker, files, symbol, instance));
  }
  if (!found.has(BASE_MESSAGE)) return {};
  const children = new Map<string, MessageClass[]>();
  for (const c of found.values())
    if (c.base && found.has(c.base)) children.set(c.base, [...(children.get(c.base) ?? []), c]);
  for (const list of children.values())
    list.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);

  const out: Record<string, JsonSchema> = {};
  const define = async (c: MessageClass): Promise<void> => {
    if (out[c.name]) return;
    const description = c.description ? { description: c.description } : {};
    const kids = children.get(c.name) ?? [];
    if (c.abstract && kids.length) {
      out[c.name] = { ...description, oneOf: kids.map((k) => ({ $ref: `#/definitions/${k.name}` })) };
      for (const k of kids) await define(k);
      return;
    }
    out[c.name] = {};
    const { required: _, ...schema } = await write(c.instance);
    out[c.name] = { ...description, ...schema };
  };
  await define(found.get(BASE_MESSAGE) as MessageClass);
  return out;
}

async function describe(checker: Checker, files: readonly string[], symbol: TsSymbol, instance: Type) {
  const declared = await checker.getDeclaredTypeOfSymbol(symbol);
  const [base] = declared.isObjectType() ? await checker.getBaseTypes(declared as InterfaceType) : [];
  const ctor = await checker.getTypeOfSymbol(symbol);
  const signatures = ctor ? await checker.getSignaturesOfType(ctor, SignatureKind.Construct) : [];
  const declaration = symbol.declarations[0];
  const file = declaration ? files.findIndex((f) => f.toLowerCase() === declaration.path.toLowerCase()) : -1;
  return {
    name: symbol.name,
    base: (await base?.getSymbol())?.name,
    abstract: signatures.some((s) => s.isAbstract),
    description: await checker.getDocumentationCommentOfSymbol(symbol).catch(() => ""),
    instance,
    order: [file < 0 ? files.length : file, declaration?.index ?? 0] as [number, number],
  };
}
