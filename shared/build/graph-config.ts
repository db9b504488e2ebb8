import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { envNameProblem } from "../config.ts";
import { BuildError } from "../errors.ts";
import type { CorsConfig as StoredCors } from "../records/control.ts";
import { unsafePatternReason } from "../safe-regex.ts";
import { realInside, repoRelative } from "./paths.ts";

// The graph config (langgraph.json, compat-notes "Agent server"): which graphs a repository holds and where.
// Keys this platform does not use (dockerfile_lines, …) are tolerated and kept, and named in the build log
// (unhonouredKeys); the keys it uses are checked here, so a mistake fails the build with the key's path.

export interface GraphSpec {
  /** The graph's source file as written, relative to the config's directory. */
  file: string;
  exportName: string;
}

export interface GraphConfig {
  /** graph_id → "./path/file.ts:exportName" */
  graphs: Record<string, string>;
  dependencies?: string[];
  /** A .env file path relative to the config's directory, or the variables themselves. */
  env?: string | Record<string, string>;
  node_version?: string;
  /** graph_id → description (also gathered from `{path, description}` graph entries). */
  description?: Record<string, string>;
  /** The agent server's HTTP settings (HttpConfigSchema). */
  http?: HttpConfig;
  /** Custom auth: the module exporting an `Auth` (`./src/auth.ts:auth`). */
  auth?: AuthConfig;
  /** Generative UI: component name → its source file. */
  ui?: Record<string, string>;
  ui_config?: { shared?: string[] };
  store?: StoreConfig;
  checkpointer?: CheckpointerConfig;
  /** Values the reference serves and this platform cannot: each left out with why (the build logs them). */
  not_served?: string[];
  [key: string]: unknown;
}

/** An id that can be its bundle's file name as it is (graphs/<id>.mjs): no separators, no dot-only names. */
const FILE_SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The reference takes any string as a graph id; ours are data (and URL segments), bounded and printable. */
const MAX_GRAPH_ID = 256;
export const isGraphId = (id: string): boolean =>
  id.length > 0 && id.length <= MAX_GRAPH_ID && [...id].every((c) => c >= " " && c !== "\x7f");
/** The bundle entry of a graph: its id when that is a safe file name, else a name made from its hash. */
export const graphEntryName = (id: string): string =>
  FILE_SAFE_ID.test(id)
    ? `graphs/${id}`
    : `graphs/_${createHash("sha256").update(id).digest("hex").slice(0, 16)}`;
const EXPORT_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const JS_FILE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;

// Values of `http.cors` become response headers: each must be one header token (or an origin), no spaces,
// commas or control characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const METHOD = /^[A-Za-z]+$/;
const ORIGIN = /^[\x21-\x2b\x2d-\x7e]+$/;
const compiles = (re: string) => {
  try {
    new RegExp(re);
    return true;
  } catch {
    return false;
  }
};
const tokens = (pattern: RegExp, what: string) =>
  z.array(z.string().regex(pattern, { error: `${what}: one value per item, without spaces or commas` }), {
    error: `must be a list of ${what}`,
  });

/** langgraph.json `http.cors`, as the reference server reads it (its CorsConfig). */
export const CorsConfigSchema = z.strictObject(
  {
    allow_origins: tokens(ORIGIN, "origins").optional(),
    allow_origin_regex: z
      .string({ error: "must be a regular expression (a string)" })
      .refine(compiles, { error: "is not a valid regular expression" })
      .superRefine((re, ctx) => {
        const unsafe = compiles(re) ? unsafePatternReason(re, "the regex") : undefined;
        if (unsafe) ctx.addIssue({ code: "custom", message: unsafe });
      })
      .optional(),
    allow_methods: tokens(METHOD, "HTTP methods").optional(),
    allow_headers: tokens(HEADER_NAME, "header names").optional(),
    allow_credentials: z.boolean({ error: "must be true or false" }).optional(),
    expose_headers: tokens(HEADER_NAME, "header names").optional(),
    max_age: z.int({ error: "must be a whole number of seconds" }).min(0).optional(),
  },
  { error: (issue) => (issue.code === "invalid_type" ? "must be an object of CORS settings" : undefined) },
);
/** What the schema yields is the stored shape (a compile-time check: it fails to type-check if they part). */
export type CorsConfig = YieldsStored<z.infer<typeof CorsConfigSchema>>;
type YieldsStored<T extends StoredCors> = T;

const flag = z.boolean({ error: "must be true or false" }).optional();
const modulePath = (what: string) =>
  z
    .string({ error: `${what} must be a path like './src/file.ts:export'` })
    .refine((v) => v.trim() !== "", { error: `${what} must not be empty` });
const minutes = z.number({ error: "must be a number of minutes" }).positive({ error: "must be above 0" });

/** langgraph.json `http`, as the reference server reads it (its HttpConfig). */
export const HttpConfigSchema = z.looseObject(
  {
    cors: CorsConfigSchema.optional(),
    app: modulePath("http.app").optional(),
    disable_assistants: flag,
    disable_threads: flag,
    disable_runs: flag,
    disable_store: flag,
    disable_meta: flag,
    disable_ui: flag,
    disable_mcp: flag,
    disable_a2a: flag,
    disable_webhooks: flag,
    enable_custom_route_auth: flag,
    /** This platform's: false serves http.app's HTML at the deployment's own origin without the CSP sandbox. */
    html_sandbox: flag,
  },
  { error: "http must be an object" },
);
export type HttpConfig = z.infer<typeof HttpConfigSchema>;

/** langgraph.json `auth` (the reference's AuthConfig): where the `Auth` instance is exported. */
export const AuthConfigSchema = z.looseObject(
  { path: modulePath("auth.path").optional(), disable_studio_auth: flag },
  { error: 'auth must be an object like {"path": "./src/auth.ts:auth"}' },
);
export type AuthConfig = z.infer<typeof AuthConfigSchema>;

/** langgraph.json `store`: semantic search (`index`) and item time-to-live (`ttl`). */
export const StoreConfigSchema = z.looseObject(
  {
    index: z
      .looseObject(
        {
          embed: z
            .string({ error: 'must name the embeddings: "provider:model" or "./file.ts:export"' })
            .min(1, { error: "must not be empty" }),
          dims: z.int({ error: "must be a whole number" }).positive({ error: "must be above 0" }),
          fields: z.array(z.string(), { error: "must be a list of JSON paths" }).optional(),
        },
        { error: "store.index must be an object with embed and dims" },
      )
      .optional(),
    ttl: z
      .looseObject(
        {
          refresh_on_read: flag,
          default_ttl: minutes.optional(),
          sweep_interval_minutes: minutes.optional(),
        },
        { error: "store.ttl must be an object" },
      )
      .optional(),
  },
  { error: "store must be an object" },
);
export type StoreConfig = z.infer<typeof StoreConfigSchema>;

/** langgraph.json `checkpointer`: thread time-to-live (`ttl`). */
export const CheckpointerConfigSchema = z.looseObject(
  {
    ttl: z
      .looseObject(
        {
          strategy: z.enum(["delete"], { error: 'the only strategy is "delete"' }).optional(),
          default_ttl: minutes.optional(),
          sweep_interval_minutes: minutes.optional(),
        },
        { error: "checkpointer.ttl must be an object" },
      )
      .optional(),
  },
  { error: "checkpointer must be an object" },
);
export type CheckpointerConfig = z.infer<typeof CheckpointerConfigSchema>;

/**
 * langgraph.json `node_version`: the Node.js majors a deployment's runtime can be, AWS Lambda's supported runtimes
 * (nodejs22.x, 24.x; 20 is past its end of life). Locally graphs run on 22 (shared/containment/sandbox-node.ts).
 */
export const NODE_VERSIONS = ["22", "24"] as const;

const scalar = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const GraphEntry = z.union([
  z.string(),
  z.looseObject({ path: z.string(), description: z.string().optional() }),
]);
const Schema = z.looseObject({
  graphs: z.record(z.string(), GraphEntry, { error: "graphs must map graph ids to './file.ts:export'" }),
  dependencies: z.array(z.string(), { error: "dependencies must be a list of paths" }).optional(),
  env: z
    .union([z.string(), z.record(z.string(), scalar)], {
      error: "env must be a .env file path or an object of strings",
    })
    .optional(),
  node_version: z
    .union([z.string(), z.number()])
    .transform((v) => String(v).trim())
    .refine((v) => (NODE_VERSIONS as readonly string[]).includes(v), {
      error: `must be one of ${NODE_VERSIONS.map((v) => `"${v}"`).join(", ")} (the supported Node.js majors graphs run on)`,
    })
    .optional(),
  description: z.unknown().optional(),
  http: HttpConfigSchema.optional(),
  auth: AuthConfigSchema.optional(),
  ui: z
    .record(z.string(), modulePath("each ui component"), {
      error: "ui must map component names to their source files",
    })
    .optional(),
  ui_config: z
    .looseObject({ shared: z.array(z.string(), { error: "must be a list of package names" }).optional() })
    .optional(),
  store: StoreConfigSchema.optional(),
  checkpointer: CheckpointerConfigSchema.optional(),
});

/** The file part of a module spec: before its last colon, or the whole spec without one. */
const specFile = (spec: string): string => {
  const colon = spec.lastIndexOf(":");
  return (colon === -1 ? spec : spec.slice(0, colon)).trim();
};

/**
 * "./src/agent.ts:graph" → {file: "./src/agent.ts", exportName: "graph"}. Without a colon the module's default
 * export is the graph, as in the LangGraph.js API server (`module[exportSymbol || "default"]`).
 */
export function parseGraphSpec(spec: string): GraphSpec {
  if (typeof spec !== "string" || spec.trim() === "") throw new BuildError("graph spec is empty");
  const colon = spec.lastIndexOf(":");
  const file = specFile(spec);
  const exportName = colon === -1 ? "default" : spec.slice(colon + 1).trim();
  if (file === "") throw new BuildError(`graph spec ${JSON.stringify(spec)} names no file`);
  if (!EXPORT_NAME.test(exportName))
    throw new BuildError(
      `graph spec ${JSON.stringify(spec)}: ${JSON.stringify(exportName)} is not an export name`,
    );
  if (file.endsWith(".py"))
    throw new BuildError(`graph spec ${JSON.stringify(spec)}: Python graphs are not supported`);
  return { file, exportName };
}

/** Parses and checks a graph config's text; `configPath` is its path relative to the repository root. */
export function parseGraphConfig(text: string, configPath: string): GraphConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new BuildError(`graph config ${configPath} is not valid JSON: ${(err as Error).message}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new BuildError(`graph config ${configPath} must be a JSON object`);
  if (!("graphs" in raw) || raw.graphs === undefined || raw.graphs === null)
    throw new BuildError(`graph config ${configPath} defines no graphs`);
  const notServed = leaveOutUnservable(raw as Record<string, unknown>);
  const parsed = Schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? `${issue.path.map(String).join(".")}: ` : "";
    throw new BuildError(`graph config ${configPath}: ${where}${issue.message}`);
  }
  const { graphs: entries, env, description, ...rest } = parsed.data;
  const configDir = path.posix.dirname(configPath.replace(/\\/g, "/"));
  const graphs: Record<string, string> = {};
  const descriptions: Record<string, string> = {};
  for (const [id, entry] of Object.entries(entries)) {
    if (!isGraphId(id))
      throw new BuildError(
        `graph config ${configPath}: graph id ${JSON.stringify(id)} must be 1 to ${MAX_GRAPH_ID} characters, none of them control characters`,
      );
    const spec = typeof entry === "string" ? entry : entry.path;
    const { file } = parseGraphSpec(spec);
    if (!repoRelative(configDir, file))
      throw new BuildError(`graph config ${configPath}: graph ${id}: ${file} is outside the repository`);
    if (!JS_FILE.test(file))
      throw new BuildError(
        `graph config ${configPath}: graph ${id}: ${file} is not a JavaScript or TypeScript file`,
      );
    graphs[id] = spec;
    if (typeof entry !== "string" && entry.description) descriptions[id] = entry.description;
  }
  if (Object.keys(graphs).length === 0)
    throw new BuildError(
      `graph config ${configPath} defines no graphs${notServed.length ? ` this platform serves (${notServed.join("; ")})` : ""}`,
    );
  if (description && typeof description === "object" && !Array.isArray(description))
    for (const [id, d] of Object.entries(description))
      if (id in graphs && typeof d === "string") descriptions[id] = d;
  if (typeof env === "string" && !repoRelative(configDir, env))
    throw new BuildError(`graph config ${configPath}: env file ${env} is outside the repository`);
  if (env && typeof env === "object") checkEnvNames(Object.keys(env), `graph config ${configPath}: env`);
  const out: GraphConfig = { ...rest, graphs };
  if (env !== undefined) out.env = env;
  if (Object.keys(descriptions).length) out.description = descriptions;
  if (notServed.length) out.not_served = notServed;
  return out;
}

const isPythonSpec = (entry: unknown): boolean => {
  const spec = typeof entry === "string" ? entry : (entry as { path?: unknown } | null)?.path;
  return typeof spec === "string" && specFile(spec).endsWith(".py");
};

/**
 * Takes out of `raw` (in place) what the reference serves and this platform cannot, so that one such value fails
 * only its own feature, never the config: Python graphs (the others still serve), `env` as a list of names
 * (the reference CLI copies them from the shell it runs in), and a CORS origin regex that could backtrack
 * without end (no origin is allowed by it). Answers why, one line each.
 */
function leaveOutUnservable(raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  const graphs = raw.graphs;
  if (graphs && typeof graphs === "object" && !Array.isArray(graphs)) {
    const kept = Object.entries(graphs).filter(([id, entry]) => {
      if (!isPythonSpec(entry)) return true;
      out.push(`graph ${id}: Python graphs are not supported`);
      return false;
    });
    raw.graphs = Object.fromEntries(kept);
  }
  if (Array.isArray(raw.env)) {
    out.push(
      "env: a list of names takes their values from the shell the reference CLI runs in; here a deployment's variables are its env and secrets",
    );
    delete raw.env;
  }
  const http = raw.http as { cors?: Record<string, unknown> } | undefined;
  const re = http?.cors && typeof http.cors === "object" ? http.cors.allow_origin_regex : undefined;
  if (typeof re === "string" && compiles(re)) {
    const unsafe = unsafePatternReason(re, "the regex");
    if (unsafe) {
      out.push(`http.cors.allow_origin_regex: ${unsafe}; no origin is allowed by it`);
      delete http!.cors!.allow_origin_regex;
    }
  }
  return out;
}

/** The langgraph.json keys a build honours: top-level ones, and those of the objects HONOURED_IN names. */
const HONOURED = new Set([
  "graphs",
  "env",
  "description",
  "dependencies",
  "node_version",
  "http",
  "auth",
  "ui",
  "ui_config",
  "store",
  "checkpointer",
  "not_served",
]);
const HONOURED_IN: Record<string, Set<string>> = {
  http: new Set([
    "cors",
    "app",
    "disable_assistants",
    "disable_threads",
    "disable_runs",
    "disable_store",
    "disable_meta",
    "disable_ui",
    "disable_mcp",
    "disable_a2a",
    "disable_webhooks",
    "html_sandbox",
  ]),
  auth: new Set(["path", "disable_studio_auth"]),
  store: new Set(["index", "ttl"]),
  checkpointer: new Set(["ttl"]),
};

/**
 * The keys of a graph config this platform does not honour (yet): kept and tolerated, never a failure, but
 * named in the revision's build log so nobody thinks they took effect.
 */
export function unhonouredKeys(config: GraphConfig): string[] {
  const out = Object.keys(config).filter((k) => !HONOURED.has(k));
  for (const [parent, keys] of Object.entries(HONOURED_IN)) {
    const value = config[parent];
    if (value && typeof value === "object")
      for (const k of Object.keys(value)) if (!keys.has(k)) out.push(`${parent}.${k}`);
  }
  return out.sort();
}

/** A langgraph.json env (the object or its .env file) names only variables a deployment may set. */
export function checkEnvNames(names: string[], where: string): void {
  for (const name of names) {
    const problem = envNameProblem(name);
    if (problem) throw new BuildError(`${where}: ${problem}`);
  }
}

/**
 * Reads the graph config at `configPath` (relative to the repository root, and staying inside it). Returns
 * the config and the absolute directory its relative paths start from.
 */
export async function readGraphConfig(
  repoDir: string,
  configPath: string,
): Promise<{ config: GraphConfig; configDir: string }> {
  const shown = configPath || "langgraph.json";
  const rel = repoRelative(".", shown);
  if (!rel) throw new BuildError(`graph config path ${shown} is outside the repository`);
  const abs = path.join(repoDir, rel);
  let text: string;
  try {
    if (!(await realInside(repoDir, abs)))
      throw new BuildError(`graph config ${shown} points outside the repository`);
    text = await readFile(abs, "utf8");
  } catch (err) {
    if (err instanceof BuildError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new BuildError(`graph config not found at ${shown}`);
    if (code === "EISDIR") throw new BuildError(`graph config ${shown} is a directory, not a file`);
    throw new BuildError(`graph config ${shown} could not be read: ${(err as Error).message}`);
  }
  return { config: parseGraphConfig(text, rel), configDir: path.dirname(abs) };
}
