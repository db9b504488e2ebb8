import { AsyncLocalStorage } from "node:async_hooks";
import { config } from "./config.ts";
import { dict } from "./dict.ts";
import { isoNow } from "./time.ts";

// Structured JSON logs with a correlation id. Values under secret-looking keys are never written.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;
const SECRET_KEY = /secret|password|passwd|token|api[-_]?key|authorization|credential|cookie|plaintext/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out = dict<unknown>();
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEY.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

// The log context of the invocation being handled, as Powertools' logger keeps one: the fields every line
// carries while a request (request_id, route, tenant_id) or a task (task, its input's ids) is handled, from
// whichever module writes it. Work an invocation starts (a promise it leaves running, a stream read after it
// returned, when bound) keeps its context; each invocation gets its own, so concurrent ones never mix.
type LogFields = Record<string, unknown>;
const invocation = new AsyncLocalStorage<LogFields>();

/** Runs `fn` in a fresh log context holding `fields` (nothing of an enclosing context: an invocation's own). */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return invocation.run({ ...fields }, fn);
}

/** Adds fields to the current log context (the tenant once authenticated); outside one it does nothing. */
export function appendLogContext(fields: LogFields): void {
  const current = invocation.getStore();
  if (current) Object.assign(current, fields);
}

/** The current log context's fields (empty outside one). */
export function logContext(): Readonly<LogFields> {
  return invocation.getStore() ?? {};
}

/** `fn`, run in the current log context whoever calls it later (a callback another context fires). */
export function bindLogContext<F extends (...args: never[]) => unknown>(fn: F): F {
  return AsyncLocalStorage.bind(fn);
}

/** An async iterable whose reads run in the current log context, whoever reads it (a streamed response). */
export function streamInLogContext<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  const inContext = AsyncLocalStorage.snapshot();
  return {
    [Symbol.asyncIterator]() {
      const it = inContext(() => source[Symbol.asyncIterator]());
      return {
        next: (...args: [] | [unknown]) => inContext(() => it.next(...args)),
        return: (value?: unknown) =>
          inContext(() => (it.return ? it.return(value) : Promise.resolve({ done: true as const, value }))),
        throw: (err?: unknown) => inContext(() => (it.throw ? it.throw(err) : Promise.reject(err))),
      } as AsyncIterator<T>;
    },
  };
}

export class Logger {
  constructor(private readonly fields: LogFields = {}) {}
  child(fields: LogFields): Logger {
    return new Logger({ ...this.fields, ...fields });
  }
  private write(level: Level, msg: string, extra?: LogFields) {
    if (LEVELS[level] < LEVELS[config.logLevel]) return;
    const line = {
      level,
      time: isoNow(),
      msg,
      ...this.fields,
      ...(redact(logContext()) as object),
      ...(redact(extra ?? {}) as object),
    };
    (level === "error" || level === "warn" ? process.stderr : process.stdout).write(
      `${JSON.stringify(line)}\n`,
    );
  }
  debug(msg: string, extra?: LogFields) {
    this.write("debug", msg, extra);
  }
  info(msg: string, extra?: LogFields) {
    this.write("info", msg, extra);
  }
  warn(msg: string, extra?: LogFields) {
    this.write("warn", msg, extra);
  }
  error(msg: string, extra?: LogFields) {
    this.write("error", msg, extra);
  }
}

export const logger = new Logger({ service: "agent-platform" });
