import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { inject } from "vitest";

// A tiny HTTP server on 127.0.0.1 standing in for a third party (an OAuth token endpoint, a git host's API, a
// webhook receiver): it records each request and answers with what the test says.
export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}
export interface Answer {
  status: number;
  body?: unknown;
  type?: string;
  headers?: Record<string, string>;
}
export interface FakeServer {
  url: string;
  seen: Seen[];
  answer: (req: Seen) => Answer;
  close(): Promise<void>;
}

export async function fakeServer(answer: (req: Seen) => Answer): Promise<FakeServer> {
  const state: FakeServer = {
    url: "",
    seen: [],
    answer,
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const seen: Seen = {
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      state.seen.push(seen);
      const out = state.answer(seen);
      const text = typeof out.body === "string" ? out.body : JSON.stringify(out.body ?? {});
      res.writeHead(out.status, { "content-type": out.type ?? "application/json", ...out.headers });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 100;
  state.url = `http://127.0.0.1:${await listenAllowed(server)}`;
  return state;
}

/**
 * Listens on the first free loopback port of those EGRESS_ALLOW names (test/global-setup.ts): a third party the
 * platform may call, as an operator's LAN host is. Outside the integration project (no local cloud), any port.
 */
async function listenAllowed(server: Server): Promise<number> {
  let ports: number[] = [];
  try {
    ports = inject("allowedPorts") ?? [];
  } catch {
    // not in a project with the local cloud's global setup
  }
  for (const port of ports.length ? ports : [0]) {
    const bound = await new Promise<boolean>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) =>
        err.code === "EADDRINUSE" && ports.length ? resolve(false) : reject(err);
      server.once("error", onError).listen(port, "127.0.0.1", () => {
        server.off("error", onError);
        resolve(true);
      });
    });
    if (bound) return (server.address() as { port: number }).port;
  }
  throw new Error(`every port EGRESS_ALLOW names for stand-ins is taken (${ports.join(", ")})`);
}
