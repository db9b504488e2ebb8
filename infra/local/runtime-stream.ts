import { type Agent, type IncomingHttpHeaders, request } from "node:http";
import { DRAIN_HEADER, threadOfDrainHeader } from "../../shared/agent/runtime/drain-asks.ts";
import { drainLine, preludeOf, type RuntimeEvent } from "../../shared/agent/runtime/lambda-protocol.ts";
import { runtimeFunctionName } from "../../shared/containment/runtime-policy.ts";
import { ROUTER_AUTH_HEADER, ROUTER_TENANT_HEADER, RUNTIME_TOKEN_HEADER } from "./runtime-protocol.ts";

// A local runtime (a child process answering HTTP on its socket) as the runtime function the router invokes in
// AWS: a RuntimeEvent's request goes to the socket with the runtime's token and the router's headers, and the
// answer comes back in the lambda protocol (shared/agent/runtime/lambda-protocol.ts): a drain line for each 103
// drain ask, the prelude (status, headers), then the body as the runtime writes it.

/** Chunks held before the runtime's answer is paused until the caller reads on. */
const HIGH_WATER_CHUNKS = 64;

/** The deployment whose runtime function a name or ARN names (`agent-rt-<id>`, qualified or not), if any. */
export function deploymentOfFunction(nameOrArn: string): string | undefined {
  const name = nameOrArn.replace(/^arn:aws:lambda:[^:]*:\d{12}:function:/, "").split(":")[0];
  const prefix = runtimeFunctionName("");
  return name.startsWith(prefix) && name.length > prefix.length ? name.slice(prefix.length) : undefined;
}

/** Header values as one string each, as a runtime function's prelude carries them. */
function flat(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

export interface RuntimeSocket {
  socketPath: string;
  agent: Agent;
  token: string;
}

/** The runtime's answer to an `http` RuntimeEvent, in the lambda protocol; `signal` ends the request early. */
export async function* runtimeAnswer(
  to: RuntimeSocket,
  e: Extract<RuntimeEvent, { kind: "http" }>,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const ev = e.event;
  const body =
    ev.body === undefined || ev.body === null
      ? Buffer.alloc(0)
      : Buffer.from(ev.body, ev.isBase64Encoded ? "base64" : "utf8");
  const headers: Record<string, string> = { ...(ev.headers as Record<string, string>) };
  delete headers["transfer-encoding"];
  Object.assign(headers, {
    "content-length": String(body.length),
    [RUNTIME_TOKEN_HEADER]: to.token,
    [ROUTER_TENANT_HEADER]: e.tenant_id,
    [ROUTER_AUTH_HEADER]: e.auth ?? "operator",
  });
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let answer: import("node:http").IncomingMessage | undefined;
  const push = (b: Buffer) => {
    queue.push(b);
    if (queue.length >= HIGH_WATER_CHUNKS) answer?.pause();
    wake?.();
  };
  const fail = (err: Error) => {
    failure ??= err;
    wake?.();
  };
  const upstream = request(
    {
      socketPath: to.socketPath,
      method: ev.requestContext?.http?.method ?? "GET",
      path: `${ev.rawPath ?? "/"}${ev.rawQueryString ? `?${ev.rawQueryString}` : ""}`,
      headers,
      agent: to.agent,
    },
    (res) => {
      answer = res;
      push(Buffer.from(preludeOf({ statusCode: res.statusCode ?? 502, headers: flat(res.headers) })));
      res.on("data", (chunk: Buffer) => push(chunk));
      res.on("end", () => {
        ended = true;
        wake?.();
      });
      res.on("error", fail);
      res.on("close", () => {
        if (!res.complete) fail(new Error("the runtime's answer was cut short"));
      });
    },
  );
  // A drain the answer asks for (a 103 answer) is a line before the prelude; the router validates and starts it.
  upstream.on("information", (info) => {
    if (info.statusCode !== 103 || info.headers[DRAIN_HEADER] === undefined) return;
    const thread = threadOfDrainHeader(info.headers[DRAIN_HEADER]);
    if (thread !== undefined) push(Buffer.from(drainLine(thread)));
  });
  upstream.on("error", fail);
  // A caller that leaves ends the runtime's side too (a stream with on_disconnect=cancel cancels its run).
  const abort = () => upstream.destroy();
  signal.addEventListener("abort", abort);
  upstream.end(body);
  try {
    while (true) {
      const next = queue.shift();
      if (next) {
        if (queue.length < HIGH_WATER_CHUNKS / 2) answer?.resume();
        yield next;
        continue;
      }
      if (ended) return;
      if (failure) throw failure;
      await new Promise<void>((r) => {
        wake = r;
      });
      wake = undefined;
    }
  } finally {
    signal.removeEventListener("abort", abort);
    if (!ended) upstream.destroy();
  }
}
