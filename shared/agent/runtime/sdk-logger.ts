import { logger } from "../../log.ts";

// The LangGraph server's global logger, as `getLogger()` of `@langchain/langgraph-sdk/logging` finds it: graphs
// written for the reference server call it (at import or in a node) and fail to load where it is missing. It is
// registered before a deployment's graphs are imported, and writes into the platform's JSON logs with the log
// context of the run that writes (`source: "graph"` tells graph lines from the platform's own).
export const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

type Meta = Record<string, unknown>;
const LEVELS = ["error", "warn", "info", "http", "verbose", "debug", "silly"] as const;
type SdkLevel = (typeof LEVELS)[number];
const platformLevel = (l: SdkLevel) =>
  l === "error" || l === "warn" || l === "info" ? l : l === "http" ? "info" : "debug";

/** One log call as winston-style loggers take it: a message (or an object with one) and metadata. */
function entry(message: unknown, meta: unknown[]): { msg: string; extra: Meta } {
  const extra: Meta = {};
  const args: unknown[] = [];
  for (const m of meta)
    if (m && typeof m === "object" && !Array.isArray(m)) Object.assign(extra, m);
    else if (m !== undefined) args.push(m);
  if (args.length) extra.args = args;
  if (message && typeof message === "object" && !(message instanceof Error)) {
    const { message: msg, ...rest } = message as Meta;
    return { msg: String(msg ?? ""), extra: { ...rest, ...extra } };
  }
  if (message instanceof Error) return { msg: message.message, extra: { ...extra, error: message } };
  return { msg: String(message), extra };
}

export type SdkLogger = Record<SdkLevel, (message: unknown, ...meta: unknown[]) => SdkLogger> & {
  log(level: string, message: unknown, ...meta: unknown[]): SdkLogger;
  child(fields: Meta): SdkLogger;
};

/** A leveled logger over the platform's, carrying `fields` on every line. */
export function sdkLogger(fields: Meta = {}): SdkLogger {
  const out = {} as SdkLogger;
  const write = (level: SdkLevel, message: unknown, meta: unknown[]) => {
    const { msg, extra } = entry(message, meta);
    logger[platformLevel(level)](msg, { source: "graph", ...fields, ...extra });
    return out;
  };
  for (const level of LEVELS) out[level] = (message, ...meta) => write(level, message, meta);
  out.log = (level, message, ...meta) =>
    write((LEVELS as readonly string[]).includes(level) ? (level as SdkLevel) : "info", message, meta);
  out.child = (more) => sdkLogger({ ...fields, ...more });
  return out;
}

/** Registers the global logger `getLogger()` answers (once per process; graphs import after this). */
export function registerSdkLogger(): void {
  const g = globalThis as Record<symbol, unknown>;
  if (!(SDK_LOGGER in g)) g[SDK_LOGGER] = sdkLogger();
}
