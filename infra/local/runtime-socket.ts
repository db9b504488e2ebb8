import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { config } from "../../shared/config.ts";
import { type EgressRules, egressConnect, egressForward } from "../../shared/containment/egress.ts";
import { jsonResult, write } from "./gateway.ts";
import { bufferedBodyBytes } from "./policy-proxy/index.ts";
import { SocketBudget } from "./socket-budget.ts";

// The platform's end of one sandboxed runtime's Unix socket (platform.sock in the runtime's socket folder): the
// runtime's only way out. Who calls is known by the socket itself, so nothing the runtime says can make it
// another runtime. It serves:
// - AWS calls (SigV4-signed DynamoDB and S3 requests) → the AWS handler (the policy proxy);
// - POST /__platform/runtime-traces → the runtime's traces, into its deployment's project;
// - POST /__platform/run-webhook → a finished run's webhook, built by the platform from the run's record and sent
//   to the URL the record holds, under the egress proxy's address policy;
// - CONNECT and absolute-URI requests → the egress proxy (public internet only).
// A runtime cannot make the platform hold more than its budget of request bodies (issue 33): each kind has a
// size cap, checked on the declared length before the body is read (413), and the bodies being read at once
// fit AGENT_SOCKET_BUFFER_BYTES; more wait unread, and beyond AGENT_SOCKET_QUEUE of them the answer is 503
// (a runtime's trace sender retries; its AWS SDK retries a 503). Egress tunnels stream and are not counted.
export const TRACES_PATH = "/__platform/runtime-traces";
export const WEBHOOK_PATH = "/__platform/run-webhook";

export interface RuntimeSocketHandlers {
  aws: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
  traces: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** A finished run's webhook: the platform builds and sends it from the run's record (the runtime names the run). */
  webhook: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  egress: EgressRules;
}

/** A webhook's ask: the run's ids and the body the platform sends (its own handler reads at most this). */
export const WEBHOOK_BODY_BYTES = 2 * 1024 * 1024;
const STREAMED_BYTES = 64 * 1024;

type Kind = "aws" | "traces" | "webhook";
/** The most a message of each kind may carry (413 beyond it, before a byte of it is read); none: streamed. */
const capOf = (kind: Kind, req: IncomingMessage): number | undefined =>
  kind === "traces"
    ? config.agent.traceBodyBytes
    : kind === "webhook"
      ? WEBHOOK_BODY_BYTES
      : bufferedBodyBytes(req) || undefined;

function kindOf(req: IncomingMessage): Kind | undefined {
  if (String(req.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256")) return "aws";
  if (req.method === "POST" && req.url === TRACES_PATH) return "traces";
  if (req.method === "POST" && req.url === WEBHOOK_PATH) return "webhook";
  return undefined;
}

/** Refuses a request without reading its body, and closes the connection so the rest is never sent. */
function refuse(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}) {
  const result = jsonResult(status, { detail });
  write(res, { ...result, headers: { ...result.headers, connection: "close", ...headers } });
}

export async function servePlatformSocket(path: string, h: RuntimeSocketHandlers): Promise<Server> {
  // One runtime's socket: the bodies it may have the platform hold at once, whatever it sends in parallel.
  const budget = new SocketBudget(config.agent.socketBufferBytes, config.agent.socketQueue);
  const server = createServer((req, res) => {
    const done = (err: unknown) => {
      if (!res.headersSent)
        write(res, jsonResult(502, { detail: `platform socket: ${(err as Error)?.message}` }));
      else res.destroy();
    };
    try {
      if (/^https?:\/\//i.test(req.url ?? "")) return void egressForward(req, res, h.egress).catch(done);
      const kind = kindOf(req);
      if (!kind) {
        req.resume();
        return write(res, jsonResult(404, { detail: "Not Found" }));
      }
      const cap = capOf(kind, req);
      const declared = Number(req.headers["content-length"] ?? Number.NaN);
      if (cap !== undefined && declared > cap)
        return refuse(res, 413, `The body is larger than the ${cap} bytes a ${kind} message may carry`);
      void admit(res, cap === undefined ? STREAMED_BYTES : Number.isFinite(declared) ? declared : cap)
        .then((admitted) => {
          if (!admitted) return;
          if (kind === "aws") return h.aws(req, res);
          return kind === "traces" ? h.traces(req, res) : h.webhook(req, res);
        })
        .catch(done);
    } catch (err) {
      done(err);
    }
  });

  /** Waits until the request's body fits the runtime's budget (503 when too many wait); released when answered. */
  async function admit(res: ServerResponse, bytes: number): Promise<boolean> {
    let closed = false;
    res.once("close", () => {
      closed = true;
    });
    const release = await budget.reserve(bytes);
    if (!release) {
      refuse(res, 503, "Too many requests of this runtime at once: retry", { "retry-after": "1" });
      return false;
    }
    if (closed) {
      release();
      return false;
    }
    res.once("close", release);
    return true;
  }
  server.on("connect", (req, socket, head) => void egressConnect(req, socket, head, h.egress));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((done, fail) => server.once("error", fail).listen(path, done));
  return server;
}
