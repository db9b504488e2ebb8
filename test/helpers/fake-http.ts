import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

// A tiny HTTP server on 127.0.0.1 standing in for a third party (an OAuth token endpoint, a git host's API):
// it records each request and answers with what the test says.
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
      res.writeHead(out.status, { "content-type": out.type ?? "application/json" });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}
