import type { HttpEvent, HttpResult } from "../../http/event.ts";
import type { RouterAuth } from "./custom-auth.ts";

// Between the platform's router (functions/agent/router.ts) and a deployment's runtime function in AWS. The
// router, having checked the API key, invokes the runtime's published version with InvokeWithResponseStream;
// the runtime answers with one JSON line (status and headers) and then the body as it is produced, so SSE
// streams reach the client as they happen. Before that line it may ask for drains of threads (drain-asks.ts).
export type RuntimeEvent =
  | { kind: "http"; tenant_id: string; event: HttpEvent; auth?: RouterAuth }
  | { kind: "drain"; tenant_id: string; deployment_id: string; thread_id: string }
  | { kind: "health" };

export interface Prelude {
  statusCode: number;
  headers: Record<string, string>;
}

export function preludeOf(result: HttpResult): string {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  return `${JSON.stringify({ statusCode: result.statusCode, headers } satisfies Prelude)}\n`;
}

/** A line a runtime may write before its prelude: it asks the platform to drain a thread (drain-asks.ts). */
export const drainLine = (threadId: string) => `${JSON.stringify({ drain: threadId })}\n`;

/** The first line of what is left of a runtime's answer: a drain ask, or the prelude (then the body). */
export type Head = { drain: unknown; prelude?: undefined } | { prelude: Prelude };

/**
 * Reads the first line off a runtime's byte stream: a drain ask or the prelude, and the bytes after it; or
 * undefined while the line is incomplete. A malformed line throws (the router answers 502).
 */
export function splitHead(buffered: Buffer): { head: Head; rest: Buffer } | undefined {
  const nl = buffered.indexOf(0x0a);
  if (nl < 0) {
    if (buffered.length > 64 * 1024) throw new Error("the runtime's answer has no prelude");
    return undefined;
  }
  const line = JSON.parse(buffered.subarray(0, nl).toString("utf8")) as unknown;
  const rest = buffered.subarray(nl + 1);
  if (line && typeof line === "object" && Object.keys(line).length === 1 && "drain" in line)
    return { head: { drain: line.drain }, rest };
  const { statusCode, headers } = (line ?? {}) as Partial<Prelude>;
  if (
    !Number.isInteger(statusCode) ||
    statusCode! < 100 ||
    statusCode! > 599 ||
    typeof headers !== "object" ||
    !headers ||
    Array.isArray(headers) ||
    Object.values(headers).some((v) => typeof v !== "string")
  )
    throw new Error("the runtime's prelude is malformed");
  return { head: { prelude: { statusCode: statusCode!, headers } }, rest };
}

/** Reads an answer that asks no drains (the health check's): its prelude and the bytes after it. */
export function splitPrelude(buffered: Buffer): { prelude: Prelude; rest: Buffer } | undefined {
  const split = splitHead(buffered);
  if (!split) return undefined;
  if (!split.head.prelude) throw new Error("the runtime's prelude is malformed");
  return { prelude: split.head.prelude, rest: split.rest };
}
