import { Validator } from "@cfworker/json-schema";
import { inputCheckSchema } from "../../../../shared/agent/assistants/input-check.ts";

// A form model from a graph's JSON schema (input, config, context, state): strings, numbers, booleans, enums,
// arrays, nested objects and chat messages become fields; what the form cannot express is a JSON field. The
// raw-JSON mode and every edited state are checked with a JSON-schema validator that needs no `eval` (the
// console's CSP forbids it).

export type Schema = Record<string, any>;

export type Field =
  | { kind: "string"; format?: string }
  | { kind: "number"; integer: boolean }
  | { kind: "boolean" }
  | { kind: "enum"; options: (string | number | boolean | null)[] }
  | { kind: "array"; items: Field }
  | { kind: "object"; properties: Property[] }
  | { kind: "messages" }
  | { kind: "json" };

export interface Property {
  name: string;
  title: string;
  description?: string;
  required: boolean;
  field: Field;
}

/** A chat message as the form edits it; sent as `{role, content}`. */
export interface FormMessage {
  role: "user" | "assistant" | "system";
  content: string;
}

const MAX_DEPTH = 6;

/** `#/definitions/X` or `#/$defs/X` in the root schema. */
function resolve(schema: Schema | undefined, root: Schema): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 20 && typeof s.$ref === "string"; i++) {
    const path = s.$ref.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
    let at: any = root;
    for (const p of path) at = at?.[p];
    s = { ...(at ?? {}), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) };
  }
  return s;
}

/** anyOf/oneOf with null is an optional value of the other branch; `type: [x, "null"]` likewise. */
function unwrapNullable(s: Schema, root: Schema): Schema {
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) {
    const real = alts.map((a: Schema) => resolve(a, root)).filter((a: Schema) => a.type !== "null");
    if (real.length === 1) return { ...real[0], description: s.description ?? real[0].description };
  }
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t: string) => t !== "null");
    if (types.length === 1) return { ...s, type: types[0] };
  }
  return s;
}

/**
 * A message schema: an object with `content` and a `type` or `role` (LangChain's BaseMessage), or a union of
 * them (BaseMessage as the reference writes it from a graph's types: `oneOf` the message classes).
 */
function isMessageSchema(s: Schema, root: Schema, depth = 0): boolean {
  const alts = s.oneOf ?? s.anyOf;
  if (Array.isArray(alts) && alts.length && depth < 3)
    return alts.every((a: Schema) => isMessageSchema(resolve(a, root), root, depth + 1));
  return Boolean(s.type === "object" && s.properties?.content && (s.properties.type || s.properties.role));
}

export function fieldOf(schema: Schema | undefined, root: Schema = schema ?? {}, depth = 0): Field {
  const s = unwrapNullable(resolve(schema, root), root);
  if (depth > MAX_DEPTH) return { kind: "json" };
  if (Array.isArray(s.enum)) return { kind: "enum", options: s.enum };
  if (s.const !== undefined) return { kind: "enum", options: [s.const] };
  switch (s.type) {
    case "string":
      return { kind: "string", format: s.format };
    case "integer":
    case "number":
      return { kind: "number", integer: s.type === "integer" };
    case "boolean":
      return { kind: "boolean" };
    case "array": {
      const items = unwrapNullable(resolve(s.items, root), root);
      if (isMessageSchema(items, root)) return { kind: "messages" };
      return { kind: "array", items: fieldOf(s.items, root, depth + 1) };
    }
    case "object":
      if (!s.properties) return { kind: "json" };
      return { kind: "object", properties: propertiesOf(s, root, depth) };
    default:
      return { kind: "json" };
  }
}

function propertiesOf(s: Schema, root: Schema, depth: number): Property[] {
  const required = new Set<string>(Array.isArray(s.required) ? s.required : []);
  return Object.entries(s.properties as Record<string, Schema>).map(([name, p]) => {
    const r = resolve(p, root);
    return {
      name,
      title: r.title ?? name,
      description: r.description,
      required: required.has(name),
      field: fieldOf(p, root, depth + 1),
    };
  });
}

/** The value a new form starts from: required parts filled with their type's empty value. */
export function emptyValue(field: Field): unknown {
  switch (field.kind) {
    case "string":
      return "";
    case "boolean":
      return false;
    case "enum":
      return field.options[0];
    case "array":
    case "messages":
      return [];
    case "object":
      return Object.fromEntries(
        field.properties.filter((p) => p.required).map((p) => [p.name, emptyValue(p.field)]),
      );
    default:
      return undefined;
  }
}

/** A form value as the API takes it: messages as `{role, content}`, empty optional parts left out. */
export function toInput(field: Field, value: unknown, required = true): unknown {
  switch (field.kind) {
    case "string":
      return value === "" && !required ? undefined : value;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : undefined;
    case "messages": {
      const list = (Array.isArray(value) ? value : []) as FormMessage[];
      const kept = list
        .filter((m) => m.content.trim() !== "")
        .map((m) => ({ role: m.role, content: m.content }));
      return kept.length || required ? kept : undefined;
    }
    case "array": {
      const list = Array.isArray(value) ? value.map((v) => toInput(field.items, v)) : [];
      return list.length || required ? list : undefined;
    }
    case "object": {
      const v = (value ?? {}) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const p of field.properties) {
        const x = toInput(p.field, v[p.name], p.required);
        if (x !== undefined) out[p.name] = x;
      }
      return Object.keys(out).length || required ? out : undefined;
    }
    default:
      return value;
  }
}

/** Messages in a state (LangChain dicts) → what the form edits. */
export function formMessages(list: unknown): FormMessage[] {
  if (!Array.isArray(list)) return [];
  const role = (t: unknown): FormMessage["role"] =>
    t === "ai" || t === "assistant" ? "assistant" : t === "system" ? "system" : "user";
  return list.map((m: any) => ({
    role: role(m?.type ?? m?.role),
    content: typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""),
  }));
}

/** The schema's complaints about `value`, as "path: message" lines; none when it is valid. */
export function validate(schema: Schema | null | undefined, value: unknown): string[] {
  if (!schema) return [];
  const draft = String(schema.$schema ?? "").includes("draft-07") ? "7" : "2020-12";
  const result = new Validator(inputCheckSchema(schema) as any, draft, false).validate(value);
  if (result.valid) return [];
  // The innermost errors say what is wrong; the outer ones only that something below is.
  const leaves = result.errors.filter((e) => !/subschema|does not match/i.test(e.error));
  return (leaves.length ? leaves : result.errors).map(
    (e) => `${e.instanceLocation.replace(/^#\/?/, "/") || "/"}: ${e.error}`,
  );
}

/** Raw JSON typed by a person: the value, or why it is not JSON. */
export function parseJson(text: string): { value?: unknown; error?: string } {
  if (!text.trim()) return { value: undefined };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: `Not JSON: ${(e as Error).message}` };
  }
}
