import type { HttpEvent, HttpResult } from "../../http/event.ts";
import type { RouterAuth } from "./custom-auth.ts";

// Between the platform's router (functions/agent/router.ts) and a deployment's runtime function in AWS. The
// router, having checked the API key, invokes the runtime's published version with InvokeWithResponseStream;
// the runtime answers with one JSON line (status and headers) and then the body as it is produced, so SSE
// streams reach the client as they happen.
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

/**
 * Reads the prelude off the front of a runtime's byte stream: the prelude and the bytes after it, or undefined
 * while its line is incomplete. A malformed prelude throws (the router answers 502).
 */
export function splitPrelude(buffered: Buffer): { prelude: Prelude; rest: Buffer } | undefined {
  const nl = buffered.indexOf(0x0a);
  if (nl < 0) {
    if (buffered.length > 64 * 1024) throw new Error("the runtime's answer has no prelude");
    return undefined;
  }
  const prelude = JSON.parse(buffered.subarray(0, nl).toString("utf8")) as Prelude;
  const { statusCode, headers } = (prelude ?? {}) as Partial<Prelude>;
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
  return { prelude, rest: buffered.subarray(nl + 1) };
}
