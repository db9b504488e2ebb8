import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type EgressRules, egressConnect, egressForward } from "../../shared/outbound/egress.ts";
import { jsonResult, write } from "./gateway.ts";

// The platform's end of one sandboxed runtime's Unix socket (platform.sock in the runtime's socket folder): the
// runtime's only way out. Who calls is known by the socket itself, so nothing the runtime says can make it
// another runtime. It serves:
// - AWS calls (SigV4-signed DynamoDB and S3 requests) → the AWS handler (the policy proxy);
// - POST /__platform/runtime-traces → the runtime's traces, into its deployment's project;
// - POST /__platform/run-webhook → a finished run's webhook, built by the platform from the run's record and sent
//   to the URL the record holds, under the egress proxy's address policy;
// - CONNECT and absolute-URI requests → the egress proxy (public internet only).
export const TRACES_PATH = "/__platform/runtime-traces";
export const WEBHOOK_PATH = "/__platform/run-webhook";

export interface RuntimeSocketHandlers {
  aws: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
  traces: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** A finished run's webhook: the platform builds and sends it from the run's record (the runtime names the run). */
  webhook: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  egress: EgressRules;
}

export async function servePlatformSocket(path: string, h: RuntimeSocketHandlers): Promise<Server> {
  const server = createServer((req, res) => {
    const done = (err: unknown) => {
      if (!res.headersSent)
        write(res, jsonResult(502, { detail: `platform socket: ${(err as Error)?.message}` }));
      else res.destroy();
    };
    try {
      if (/^https?:\/\//i.test(req.url ?? "")) return void egressForward(req, res, h.egress).catch(done);
      if (String(req.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256"))
        return void Promise.resolve(h.aws(req, res)).catch(done);
      if (req.method === "POST" && req.url === TRACES_PATH) return void h.traces(req, res).catch(done);
      if (req.method === "POST" && req.url === WEBHOOK_PATH) return void h.webhook(req, res).catch(done);
      req.resume();
      write(res, jsonResult(404, { detail: "Not Found" }));
    } catch (err) {
      done(err);
    }
  });
  server.on("connect", (req, socket, head) => void egressConnect(req, socket, head, h.egress));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((done, fail) => server.once("error", fail).listen(path, done));
  return server;
}
