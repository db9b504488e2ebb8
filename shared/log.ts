import { config } from "./config.ts";
import { isoNow } from "./time.ts";

// Structured JSON logs with a correlation id. Values under secret-looking keys are never written.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;
const SECRET_KEY = /secret|password|passwd|token|api[-_]?key|authorization|credential|cookie|plaintext/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEY.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

export class Logger {
  constructor(private readonly fields: Record<string, unknown> = {}) {}
  child(fields: Record<string, unknown>): Logger {
    return new Logger({ ...this.fields, ...fields });
  }
  private write(level: Level, msg: string, extra?: Record<string, unknown>) {
    if (LEVELS[level] < LEVELS[config.logLevel]) return;
    const line = {
      level,
      time: isoNow(),
      msg,
      ...this.fields,
      ...(redact(extra ?? {}) as object),
    };
    (level === "error" || level === "warn" ? process.stderr : process.stdout).write(
      `${JSON.stringify(line)}\n`,
    );
  }
  debug(msg: string, extra?: Record<string, unknown>) {
    this.write("debug", msg, extra);
  }
  info(msg: string, extra?: Record<string, unknown>) {
    this.write("info", msg, extra);
  }
  warn(msg: string, extra?: Record<string, unknown>) {
    this.write("warn", msg, extra);
  }
  error(msg: string, extra?: Record<string, unknown>) {
    this.write("error", msg, extra);
  }
}

export const logger = new Logger({ service: "agent-platform" });
