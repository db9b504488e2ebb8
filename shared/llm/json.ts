// Small guards for walking untrusted JSON without throwing.
export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function rec(value: unknown): Json | undefined {
  return isRecord(value) ? value : undefined;
}

export function arr(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

// Follows a chain of keys/indices; negative indices count from the end.
export function dig(value: unknown, ...keys: (string | number)[]): unknown {
  let cur: unknown = value;
  for (const key of keys) {
    if (typeof key === "number") {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[key < 0 ? cur.length + key : key];
    } else {
      if (!isRecord(cur)) return undefined;
      cur = cur[key];
    }
  }
  return cur;
}

// Renders a path the way error messages name it: messages[2].content[0].text
export function pathString(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Epoch ms of an ISO string, epoch-ms number or Date; naive ISO datetimes are read as UTC, as LangSmith writes them. */
export function toMillis(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value.getTime() : undefined;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string") return undefined;
  const naive = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value);
  const ms = Date.parse(naive ? `${value}Z` : value);
  return Number.isFinite(ms) ? ms : undefined;
}
