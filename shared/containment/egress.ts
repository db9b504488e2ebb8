import { lookup } from "node:dns/promises";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { isIP, connect as netConnect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { config } from "../config.ts";
import { isInternalAddress } from "./ssrf.ts";

// The egress proxy of sandboxed code (agent runtimes, builds): the only way from a sandbox to the internet. It
// takes HTTP CONNECT (https, and any tunnel a client asks for) and absolute-URI HTTP requests, resolves the host
// itself and connects only to public addresses (the SSRF rules of shared/containment/ssrf.ts: no loopback, private,
// link-local, metadata or reserved address), pinned to the address it checked so a DNS answer cannot change
// between the check and the connection. The operator may allow named `host:port`s that resolve to internal
// addresses (EGRESS_ALLOW: a package registry or a model server on the LAN). `egressTarget` is the one address
// policy: what the platform itself sends or fetches on a caller's or a deployment's behalf (run webhooks, OAuth
// token endpoints, git host APIs: request.ts) passes it too.

export interface EgressRules {
  /** `host:port` entries allowed whatever they resolve to (lower case). */
  allow: string[];
  /** Resolves a host name (tests pass their own). */
  resolve?: (host: string) => Promise<string[]>;
}

export class EgressRefused extends Error {
  /** True when the host name has no address at all (rather than an internal one). */
  unresolved = false;
}

/** The operator's rules (EGRESS_ALLOW), the same for sandboxed code and for the platform's own requests. */
export const egressRules = (): EgressRules => ({ allow: config.egressAllow });

const resolveAll = async (host: string) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The address to connect to for `host:port`, or EgressRefused saying why. */
export async function egressTarget(host: string, port: number, rules: EgressRules): Promise<string> {
  const name = host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (!name || !Number.isInteger(port) || port < 1 || port > 65535) throw new EgressRefused("bad target");
  const allowed = rules.allow.includes(`${name}:${port}`);
  const addresses = isIP(name) ? [name] : await (rules.resolve ?? resolveAll)(name).catch(() => []);
  if (addresses.length === 0)
    throw Object.assign(new EgressRefused(`${name} does not resolve`), { unresolved: true });
  if (!allowed && addresses.some(isInternalAddress))
    throw new EgressRefused(`${name} is not a public address: sandboxed code reaches the internet only`);
  return addresses[0];
}

/** `host:port` of a CONNECT request line's target. */
function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(authority);
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

/** Answers a CONNECT (`server.on("connect", …)`): a tunnel to a public address, or 403 saying why. */
export async function egressConnect(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  rules: EgressRules,
): Promise<void> {
  client.on("error", () => {});
  const target = splitAuthority(req.url ?? "");
  let address: string;
  try {
    if (!target) throw new EgressRefused("CONNECT needs host:port");
    address = await egressTarget(target.host, target.port, rules);
  } catch (err) {
    const why = err instanceof EgressRefused ? err.message : "refused";
    client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${why}\n`);
    return;
  }
  const upstream: Socket = netConnect({ host: address, port: target.port });
  upstream.on("error", () => {
    if (client.writable) client.end("HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n");
  });
  upstream.once("connect", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
}

/** Answers an absolute-URI request (plain http through the proxy), or 403 saying why. */
export async function egressForward(
  req: IncomingMessage,
  res: ServerResponse,
  rules: EgressRules,
): Promise<void> {
  let url: URL;
  let address: string;
  try {
    url = new URL(req.url ?? "");
    if (url.protocol !== "http:")
      throw new EgressRefused("only http:// URLs are forwarded; use CONNECT for https");
    address = await egressTarget(url.hostname, Number(url.port || 80), rules);
  } catch (err) {
    req.resume();
    res.writeHead(403, { "content-type": "text/plain" });
    res.end(`${err instanceof EgressRefused ? err.message : "bad request target"}\n`);
    return;
  }
  const headers = { ...req.headers };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  const upstream = request(
    {
      host: address,
      port: Number(url.port || 80),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      // Either side hanging up mid-body ends the other; no stream of the pair is left without a listener.
      answer.on("error", () => res.destroy());
      answer.pipe(res);
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
  req.on("error", () => upstream.destroy());
  req.pipe(upstream);
}

/** A Unix socket that serves the egress proxy alone (a build's way out of its sandbox). */
export async function serveEgressSocket(path: string, rules: EgressRules): Promise<Server> {
  const server = createServer((req, res) => {
    if (/^https?:\/\//i.test(req.url ?? "")) return void egressForward(req, res, rules);
    req.resume();
    res.writeHead(404).end();
  });
  server.on("connect", (req, socket, head) => void egressConnect(req, socket, head, rules));
  await new Promise<void>((done, fail) => server.once("error", fail).listen(path, done));
  return server;
}
