import { z } from "zod";

// The kinds of setting an environment variable can hold, each a zod schema from the variable's text (undefined
// when unset or empty) to its typed value, with what the reference says of it (shared/config/reference.ts).

/** Who reads a setting: the platform's functions, a deployment's runtime, the local cloud, the CDK app, a CLI script, the revision build step. */
export type Reader = "platform" | "runtime" | "local cloud" | "CDK" | "CLI" | "build";

export interface SettingMeta {
  /** What the reference says the variable holds ("whole number ≥ 1", "one of: a, b"). */
  type: string;
  /** The default as the reference shows it; absent: unset means the feature is off or comes from elsewhere. */
  default?: string;
  description: string;
  readers: readonly Reader[];
  /** A credential or token: the reference never shows a value of it and errors never repeat it. */
  secret?: boolean;
}

/** The variable's text: undefined when unset or empty (an empty variable is an unset one). */
const raw = z
  .string()
  .optional()
  .transform((v) => (v === "" ? undefined : v));

const shown = (v: string, secret?: boolean) => (secret ? "(hidden)" : JSON.stringify(v));

type Described<T extends z.ZodType> = T & { readonly setting: SettingMeta };
const described = <T extends z.ZodType>(schema: T, meta: SettingMeta): Described<T> =>
  Object.assign(schema, { setting: meta });

interface Doc {
  description: string;
  readers: readonly Reader[];
  secret?: boolean;
}

/** Free text; `fallback` when unset. */
export function text(doc: Doc & { default: string }): Described<z.ZodType<string, string | undefined>>;
export function text(doc: Doc): Described<z.ZodType<string | undefined, string | undefined>>;
export function text(doc: Doc & { default?: string }): Described<z.ZodType<any, string | undefined>> {
  return described(
    raw.transform((v) => v ?? doc.default),
    { ...doc, type: "text" },
  );
}

/** A whole number in [min, max]; anything else set is refused. */
export function wholeNumber(
  doc: Doc & { min: number; max?: number; default: number; defaultShown?: string },
): Described<z.ZodType<number, string | undefined>>;
export function wholeNumber(
  doc: Doc & { min: number; max?: number; defaultShown?: string },
): Described<z.ZodType<number | undefined, string | undefined>>;
export function wholeNumber(
  doc: Doc & { min: number; max?: number; default?: number; defaultShown?: string },
): Described<z.ZodType<any, string | undefined>> {
  const max = doc.max ?? Number.MAX_SAFE_INTEGER;
  const range = doc.max === undefined ? `≥ ${doc.min}` : `from ${doc.min} to ${doc.max}`;
  return described(
    raw.transform((v, ctx) => {
      if (v === undefined) return doc.default;
      const n = Number(v.trim());
      if (v.trim() === "" || !Number.isSafeInteger(n) || n < doc.min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be a whole number ${range}, got ${shown(v)}` });
        return z.NEVER;
      }
      return n;
    }),
    {
      ...doc,
      type: `whole number ${range}`,
      default: doc.defaultShown ?? (doc.default === undefined ? undefined : String(doc.default)),
    },
  );
}

const TRUE = ["true", "1"];
const FALSE = ["false", "0"];
/** Exactly true, false, 1 or 0; anything else set is refused. */
export function flag(doc: Doc & { default: boolean }) {
  return described(
    raw.transform((v, ctx) => {
      if (v === undefined) return doc.default;
      if (TRUE.includes(v)) return true;
      if (FALSE.includes(v)) return false;
      ctx.addIssue({ code: "custom", message: `must be one of true, false, 1, 0, got ${shown(v)}` });
      return z.NEVER;
    }),
    { ...doc, type: "boolean: true, false, 1 or 0", default: String(doc.default) },
  );
}

/** One of `values`, exactly as written; anything else set is refused. */
export function oneOf<const V extends string>(
  values: readonly V[],
  doc: Doc & { default: V },
): Described<z.ZodType<V, string | undefined>>;
export function oneOf<const V extends string>(
  values: readonly V[],
  doc: Doc,
): Described<z.ZodType<V | undefined, string | undefined>>;
export function oneOf<const V extends string>(
  values: readonly V[],
  doc: Doc & { default?: V },
): Described<z.ZodType<any, string | undefined>> {
  return described(
    raw.transform((v, ctx) => {
      if (v === undefined) return doc.default;
      if ((values as readonly string[]).includes(v)) return v as V;
      ctx.addIssue({ code: "custom", message: `must be one of ${values.join(", ")}, got ${shown(v)}` });
      return z.NEVER;
    }),
    { ...doc, type: `one of: ${values.join(", ")}`, default: doc.default },
  );
}

/** An http(s) URL; anything else set is refused. */
export function url(doc: Doc & { default?: string }) {
  return described(
    raw.transform((v, ctx) => {
      const value = v ?? doc.default;
      if (value === undefined) return undefined;
      try {
        const parsed = new URL(value);
        if (parsed.protocol === "http:" || parsed.protocol === "https:") return value;
      } catch {
        // refused below
      }
      ctx.addIssue({ code: "custom", message: `must be an http(s) URL, got ${shown(value, doc.secret)}` });
      return z.NEVER;
    }),
    { ...doc, type: "URL" },
  );
}

/** Comma-separated entries (blank ones dropped), each checked by `item` when given. */
export function list(
  doc: Doc & { item?: { what: string; test: (entry: string) => boolean }; lowerCase?: boolean },
) {
  return described(
    raw.transform((v, ctx) => {
      const entries = (v ?? "")
        .split(",")
        .map((s) => (doc.lowerCase ? s.trim().toLowerCase() : s.trim()))
        .filter(Boolean);
      const bad = doc.item && entries.find((e) => !doc.item!.test(e));
      if (bad !== undefined && bad !== "") {
        ctx.addIssue({
          code: "custom",
          message: `must be comma-separated ${doc.item!.what}, got ${shown(bad, doc.secret)}`,
        });
        return z.NEVER;
      }
      return entries;
    }),
    { ...doc, type: `comma-separated list${doc.item ? ` of ${doc.item.what}` : ""}`, default: "(empty)" },
  );
}

/** JSON text whose parsed value `check` accepts (`what` says what it must be); kept as the parsed value. */
export function json<T>(doc: Doc & { what: string; check: (v: unknown) => v is T; default?: T }) {
  return described(
    raw.transform((v, ctx) => {
      if (v === undefined) return doc.default;
      try {
        const parsed: unknown = JSON.parse(v);
        if (doc.check(parsed)) return parsed;
      } catch {
        // refused below
      }
      ctx.addIssue({ code: "custom", message: `must be JSON: ${doc.what}` });
      return z.NEVER;
    }),
    {
      ...doc,
      type: `JSON: ${doc.what}`,
      default: doc.default === undefined ? undefined : JSON.stringify(doc.default),
    },
  );
}

/** A family of variables named by a pattern (TABLE_<ID>): each a value of `item`, by the name's variable part. */
export interface Family {
  /** The names as the reference shows them (TABLE_<ID>). */
  name: string;
  pattern: RegExp;
  item: z.ZodType<string | undefined, string | undefined> & { readonly setting: SettingMeta };
}
