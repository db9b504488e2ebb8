import { config } from "../config.ts";

// The local cloud's internal endpoint, for its Lambda environments (worker threads running the AWS bundles): what
// AWS keeps in a service (a deployment's runtime function, reached through Lambda) lives in the local cloud's
// process, which a worker reaches only over loopback, with the token of the cloud's current start.
export const LOOPBACK_TOKEN_HEADER = "x-platform-loopback-token";
export const LOOPBACK_PATHS = {
  runtimeHost: "/__platform/runtime-host",
} as const;

/** POSTs `body` to one of the local cloud's internal endpoints; its JSON answer. */
export async function callLoopback(path: string, body: unknown): Promise<unknown> {
  const loopback = config.localLoopback;
  if (!loopback) throw new Error("No local cloud to call back: PLATFORM_LOOPBACK_URL is unset");
  const res = await fetch(new URL(path, loopback.url), {
    method: "POST",
    headers: { "content-type": "application/json", [LOOPBACK_TOKEN_HEADER]: loopback.token },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`The local cloud refused ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}
