import fc from "fast-check";
import { z } from "zod";

// fast-check values from a route's zod schemas (through their JSON Schema, as /openapi.json reads them): a
// valid-ish value, then the same value with one thing broken — a field of the wrong type, huge, deeply nested,
// unicode, a huge or negative number, a field dropped or one too many.
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

export const jsonSchemaOf = (s: z.ZodType): JsonSchema =>
  z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as JsonSchema;

const small = fc.jsonValue({ maxDepth: 2 });

/** A value that (mostly) satisfies `s`; `root` resolves $refs. */
export function valid(s: JsonSchema, root: JsonSchema = s, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if (s.$ref) {
    const name = s.$ref.replace(/^#\/\$defs\//, "");
    const target = s.$ref === "#" ? root : root.$defs?.[name];
    return target ? valid(target, root, depth + 1) : small;
  }
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const options = s.anyOf ?? s.oneOf;
  if (options?.length) return fc.oneof(...options.map((o) => valid(o, root, depth + 1)));
  if (s.allOf?.length) return valid(s.allOf[0]!, root, depth + 1);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "string":
      return stringFor(s);
    case "integer":
      return fc.integer({ min: s.minimum ?? 0, max: Math.min(s.maximum ?? 1000, 2 ** 31) });
    case "number":
      return fc.double({ min: s.minimum ?? 0, max: s.maximum ?? 1000, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(s.items ? valid(s.items, root, depth + 1) : small, {
        minLength: s.minItems ?? 0,
        maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3)),
      });
    case "object": {
      const props = Object.entries(s.properties ?? {});
      if (!props.length) return fc.dictionary(fc.string({ maxLength: 8 }), small, { maxKeys: 3 });
      const shape = Object.fromEntries(props.map(([k, v]) => [k, valid(v, root, depth + 1)]));
      return fc.record(shape, { requiredKeys: (s.required ?? []).filter((k) => k in shape) });
    }
    default:
      return small;
  }
}

function stringFor(s: JsonSchema): fc.Arbitrary<string> {
  if (s.format === "uuid") return fc.uuid();
  if (s.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === "email") return fc.emailAddress();
  if (s.format === "uri" || s.format === "url") return fc.webUrl();
  if (s.pattern) {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 1e6));
    } catch {
      // An engine-specific pattern: fall through to a plain string.
    }
  }
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.max(s.minLength ?? 0, s.maxLength ?? 20) });
}

/** Nested `depth` levels deep, objects or arrays. */
export const nested = (depth: number, asArray: boolean): unknown => {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
};

/** Values that break things: wrong types, huge, deep, unicode, extreme numbers, odd keys. */
export const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, "", " ", [], {}, "null", "../../etc/passwd", "%00", "\u0000"),
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER * 10, -(2 ** 63), 2 ** 53 + 1, 0.000001, -0.5),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom("valueOf", "constructor", "__proto__", "toString", "hasOwnProperty", "prototype"),
  fc.constantFrom("🦜🔗".repeat(50), "\u202e\ud83d\ude00\u0301", "ẞ\u0000\uFFFF", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"),
  fc.integer({ min: 10_000, max: 120_000 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 420_000, max: 600_000 }).map((n) => "y".repeat(n)),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.tuple(fc.integer({ min: 33, max: 160 }), fc.boolean()).map(([d, arr]) => nested(d, arr)),
  fc.constantFrom({ "a.b": 1 }, { "": 1 }, { "a.b.c": { "": [] } }, { __proto__: 1 }, { "#x": 1, ":y": 2 }),
  fc.jsonValue({ maxDepth: 4 }),
);

type Path = (string | number)[];
function paths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (out.length > 200) return out;
  out.push(at);
  if (Array.isArray(v)) for (const [i, x] of v.slice(0, 5).entries()) paths(x, [...at, i], out);
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function setAt(root: unknown, path: Path, value: unknown, drop = false): unknown {
  if (!path.length) return value;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  const [head, ...rest] = path;
  if (rest.length) copy[head!] = setAt(copy[head!], rest, value, drop);
  else if (drop && !Array.isArray(copy)) delete copy[head!];
  else copy[head!] = value;
  return copy;
}

/** One valid-ish value of `schema` with one thing broken (or, now and then, left valid). */
export function broken(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const base = schema ? valid(schema) : small;
  return fc
    .tuple(base, fc.nat(), nasty, fc.constantFrom("replace", "drop", "extra", "whole", "keep"))
    .map(([v, pick, bad, how]) => {
      if (how === "keep") return v;
      if (how === "whole") return bad;
      const all = paths(v);
      const at = all[pick % all.length]!;
      if (how === "extra")
        return v && typeof v === "object" && !Array.isArray(v) ? { ...v, [`extra_${pick % 7}`]: bad } : bad;
      return setAt(v, at, bad, how === "drop");
    });
}

/** Query parameters: each a string, valid-ish or broken. */
export function brokenQuery(schema: JsonSchema | undefined): fc.Arbitrary<Record<string, string>> {
  const props = Object.entries(schema?.properties ?? {});
  // Capped: a request line longer than the server takes (16 KB in Node) is refused before any handler runs.
  const asText = (v: unknown) => (typeof v === "string" ? v : (JSON.stringify(v) ?? "")).slice(0, 2000);
  const each = Object.fromEntries(
    props.map(([k, s]) => [k, fc.oneof(valid(s, schema!).map(asText), nasty.map(asText))]),
  );
  return fc
    .tuple(
      fc.record(each, { requiredKeys: [] }),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 10 }), { maxKeys: 2 }),
    )
    .map(([known, extra]) => ({ ...extra, ...(known as Record<string, string>) }));
}
