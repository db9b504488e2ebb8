import { type Agent, type IncomingMessage, request, type Server } from "node:http";
import { createServer } from "node:net";

// Small helpers shared by the local servers.
export class BodyTooLarge extends Error {}

export function readBody(req: IncomingMessage, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => !failed && resolve(Buffer.concat(chunks)));
    req.on("error", (e) => !failed && reject(e));
  });
}

/** An HTTP request over a Unix socket with a JSON body (if any), and the answer's status and text. */
export function callSocket(
  socketPath: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; agent?: Agent } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = request(
      {
        socketPath,
        method,
        path,
        agent: opts.agent ?? false,
        headers: { ...opts.headers, "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, text }));
        res.on("error", fail);
      },
    );
    req.on("error", fail);
    req.end(opts.body === undefined ? undefined : JSON.stringify(opts.body));
  });
}

/**
 * Turns off Node's request timeouts (408 for a request whose headers are not read within 60 s of its connection):
 * for the policy proxy and the backends behind it, which live in the platform's process and are called by it, its
 * workers and its operator's tools on loopback. A 408 there meant this process was busy (a loaded machine), not
 * that the caller was slow: the platform's own calls failed with it.
 */
export function withoutRequestTimeouts<S extends Server>(server: S): S {
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  return server;
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const addr = server.address();
      resolve(typeof addr === "object" && addr ? addr.port : port);
    });
  });
}

export async function freePort(host = "127.0.0.1"): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r, j) => srv.once("error", j).listen(0, host, () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * Starts something on ports `freePort` found, again (three tries in all) while it fails with an error `taken`
 * recognises: a probed port can be taken by someone else before the start binds it.
 */
export async function startOnFreePorts<T>(
  start: () => Promise<T>,
  taken: (err: unknown) => boolean,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (!taken(err) || attempt >= 3) throw err;
    }
  }
}

export class StartupError extends Error {}
