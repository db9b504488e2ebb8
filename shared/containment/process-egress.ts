import http from "node:http";
import https from "node:https";
import { connect, createServer, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ProxyAgent, setGlobalDispatcher } from "undici";
import { setEnvironment } from "../config.ts";

// The network of a sandboxed process (an agent runtime, a build's untrusted step), set up before any user code
// loads. Its namespace has only a loopback of its own; the one way out is the platform's Unix socket. Platform
// traffic (AWS calls: shared/aws/clients.ts; traces and webhooks: infra/local/runtime-main.ts) goes straight
// over that socket; everything else (a graph's fetch, node:http(s), model vendors' SDKs, npm and git) goes
// through the platform's egress proxy on the same socket, reached through a relay on the namespace's loopback
// so that clients which read HTTP(S)_PROXY find it too.

/** A CONNECT tunnel through the relay to `host:port`: the socket once the proxy said 200, else an error. */
function tunnel(
  proxyPort: number,
  host: string,
  port: number,
  done: (err: Error | null, s?: Socket) => void,
) {
  const s = connect({ host: "127.0.0.1", port: proxyPort });
  let head = "";
  const onData = (chunk: Buffer) => {
    head += chunk.toString("latin1");
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    s.off("data", onData);
    const status = Number(head.slice(9, 12));
    if (status === 200) return done(null, s);
    s.destroy();
    const why = head.slice(end + 4).trim();
    done(
      Object.assign(new Error(`egress refused ${host}:${port}: ${why || status}`), {
        code: "EGRESS_REFUSED",
      }),
    );
  };
  s.on("data", onData);
  s.once("error", (err) => done(err));
  s.once("connect", () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nhost: ${host}:${port}\r\n\r\n`));
}

type Create = (options: Record<string, unknown>, cb: (err: Error | null, s?: Socket) => void) => undefined;

/** node:http and node:https global agents that tunnel every connection through the egress proxy. */
function tunnellingAgents(proxyPort: number) {
  const plain = new http.Agent({ keepAlive: true });
  (plain as unknown as { createConnection: Create }).createConnection = (o, cb) => {
    tunnel(proxyPort, String(o.host ?? "localhost"), Number(o.port ?? 80), cb);
    return undefined;
  };
  const secure = new https.Agent({ keepAlive: true });
  (secure as unknown as { createConnection: Create }).createConnection = (o, cb) => {
    const host = String(o.host ?? "localhost");
    tunnel(proxyPort, host, Number(o.port ?? 443), (err, raw) => {
      if (err || !raw) return cb(err);
      const s = tlsConnect({ ...o, socket: raw, servername: String(o.servername ?? host) } as never);
      s.once("secureConnect", () => cb(null, s));
      s.once("error", (e) => cb(e));
    });
    return undefined;
  };
  return { plain, secure };
}

/**
 * Starts the loopback relay to the platform socket and points every HTTP client of this process at the egress
 * proxy behind it. Returns the proxy URL (also in HTTP_PROXY/HTTPS_PROXY for clients that read them).
 */
export async function installEgress(platformSocket: string): Promise<string> {
  const port = await loopbackRelay(platformSocket);
  const url = `http://127.0.0.1:${port}`;
  // Through the config module, the one writer of the environment (it reloads the settings after).
  setEnvironment({
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: undefined,
    no_proxy: undefined,
  });
  setGlobalDispatcher(new ProxyAgent(url));
  const agents = tunnellingAgents(port);
  http.globalAgent = agents.plain;
  https.globalAgent = agents.secure;
  return url;
}

/** A loopback TCP port relayed to a Unix socket, for clients that speak only TCP (it does not hold the process open). */
export async function loopbackRelay(socketPath: string): Promise<number> {
  const relay = createServer((inbound) => {
    const out = connect(socketPath);
    inbound.pipe(out).pipe(inbound);
    const end = () => {
      inbound.destroy();
      out.destroy();
    };
    inbound.on("error", end);
    out.on("error", end);
  });
  await new Promise<void>((done, fail) => relay.once("error", fail).listen(0, "127.0.0.1", done));
  relay.unref();
  return (relay.address() as { port: number }).port;
}
