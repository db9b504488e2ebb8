// Graph values to the JSON the agent API answers with: LangChain messages become `{type, content, …}` dicts
// (as the reference server sends them), class instances their plain fields, functions and symbols nothing.
interface MessageLike {
  toDict(): { type: string; data: Record<string, unknown> };
}
const isMessage = (v: object): v is MessageLike => {
  const m = v as { toDict?: unknown; _getType?: unknown };
  return typeof m.toDict === "function" && typeof m._getType === "function" && "content" in v;
};

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

export function toJson(v: unknown, depth = 0): unknown {
  if (v === null || v === undefined) return v ?? null;
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "function" || typeof v === "symbol") return undefined;
  if (typeof v !== "object") return v;
  if (depth > 64) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map((x) => toJson(x, depth + 1) ?? null);
  if (isMessage(v)) {
    const d = v.toDict();
    return { ...(toJson(d.data, depth + 1) as object), type: d.type };
  }
  if (v instanceof Map) return toJson(Object.fromEntries(v), depth + 1);
  if (v instanceof Set) return toJson([...v], depth + 1);
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  const source: unknown =
    !isPlain(v) && typeof toJSON === "function" && !("lg_name" in v) ? toJSON.call(v) : v;
  if (source !== v) return toJson(source, depth + 1);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const j = toJson(x, depth + 1);
    if (j !== undefined) out[k] = j;
  }
  return out;
}
