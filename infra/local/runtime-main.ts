import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { loadRuntimeHandler } from "../../functions/load.ts";
import { mountedRoutes, servedByRuntime } from "../../functions/routes.ts";
import { controllers } from "../../shared/agent/broker.ts";
import { flushRunTraces } from "../../shared/agent/run-tracing.ts";
import { loadCustomAuth, type RouterAuth, withRequestAuth } from "../../shared/agent/runtime/custom-auth.ts";
import { customRouteAnswer } from "../../shared/agent/runtime/custom-routes.ts";
import { invokeSelfLocally } from "../../shared/agent/runtime/self-invoke.ts";
import { startRuntime } from "../../shared/agent/runtime/serve.ts";
import { drainThread, kick } from "../../shared/agent/worker.ts";
import { requestStats } from "../../shared/aws/request-stats.ts";
import { config } from "../../shared/config.ts";
import { secretHash, secretMatches } from "../../shared/crypto/secret-hash.ts";
import { HttpError } from "../../shared/errors.ts";
import { logger } from "../../shared/log.ts";
import type { IngestResult } from "../../shared/runs/store.ts";
import { Gateway, jsonResult, write } from "./gateway.ts";
import { readBody } from "./http-util.ts";
import {
  type LocalRuntimeStart,
  ROUTER_AUTH_HEADER,
  ROUTER_TENANT_HEADER,
  RUNTIME_PORT_TAKEN_EXIT,
  RUNTIME_TOKEN_HEADER,
} from "./runtime-protocol.ts";

// A deployment's runtime on the local cloud: a child process of the platform (runtimes.ts starts it under
// Node's permission model), serving that one deployment. What it is told arrives on stdin, not in its
// environment: the token that proves a request came from the platform's router, its port, where traces go.
// It exits when its parent goes away (stdin closes) and, on SIGTERM, once its runs have ended.
const DRAIN_MS = 30_000;

/** The first line on stdin; stdin stays open, and its end means the platform is gone. */
function readStart(): Promise<LocalRuntimeStart> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const nl = text.indexOf("\n");
      if (nl < 0) return;
      process.stdin.off("data", onData);
      try {
        resolve(JSON.parse(text.slice(0, nl)) as LocalRuntimeStart);
      } catch (err) {
        reject(err);
      }
    };
    process.stdin.on("data", onData);
    process.stdin.on("end", () => {
      if (!text.includes("\n")) reject(new Error("the runtime was not told what to serve"));
      process.exit(0);
    });
  });
}

async function main() {
  const start = await readStart();
  const expected = secretHash(start.token);
  const trusted = (req: IncomingMessage) =>
    secretMatches(String(req.headers[RUNTIME_TOKEN_HEADER] ?? ""), expected);
  const sendTraces = async (
    _tenant: string,
    posts: unknown[],
    patches: { id: string; body: unknown }[],
  ): Promise<IngestResult> => {
    const res = await fetch(start.trace_url, {
      method: "POST",
      headers: { "content-type": "application/json", [RUNTIME_TOKEN_HEADER]: start.token },
      body: JSON.stringify({ posts, patches }),
    });
    if (!res.ok) throw new Error(`trace ingestion answered ${res.status}`);
    return (await res.json()) as IngestResult;
  };
  const d = startRuntime(start.runtime, sendTraces);
  // AGENT_RUN_WORKER=lambda: runs go through the Lambda executor's path, played in this process.
  invokeSelfLocally((e) => drainThread(d, e.thread_id, Date.now() + 15 * 60_000));
  const gateway = new Gateway({
    routes: mountedRoutes().filter(servedByRuntime),
    loader: loadRuntimeHandler,
    // CORS is the platform's gateway's (it answers preflights and adds the headers to what this answers).
    cors: false,
    // langgraph.json http: the custom routes (http.app) answer first; disabled route groups answer 404.
    intercept: (event, route) => customRouteAnswer(event, route),
  });
  await gateway.load();
  let draining = false;

  const internal = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === "/__runtime/health") {
      await d.loadGraphs!();
      await loadCustomAuth(start.runtime.artifact_dir);
      return write(res, jsonResult(200, { ok: true, pid: process.pid }));
    }
    if (path === "/__runtime/stats" && config.countRequests !== undefined)
      return write(res, jsonResult(200, { pid: process.pid, requests: requestStats() }));
    if (path === "/__runtime/kick" && req.method === "POST") {
      const { thread_id } = JSON.parse((await readBody(req, 4096)).toString("utf8") || "{}");
      if (typeof thread_id !== "string") return write(res, jsonResult(422, { detail: "thread_id" }));
      if (!draining) await kick(d, thread_id);
      return write(res, jsonResult(202, { kicked: !draining }));
    }
    return write(res, jsonResult(404, { detail: "Not Found" }));
  };

  const server = createServer((req, res) => {
    if (!trusted(req)) {
      req.resume();
      return write(res, jsonResult(403, { detail: "Requests reach a runtime through the platform only" }));
    }
    const tenant = String(req.headers[ROUTER_TENANT_HEADER] ?? "");
    const how: RouterAuth = req.headers[ROUTER_AUTH_HEADER] === "custom" ? "custom" : "operator";
    delete req.headers[RUNTIME_TOKEN_HEADER];
    delete req.headers[ROUTER_TENANT_HEADER];
    delete req.headers[ROUTER_AUTH_HEADER];
    const [path, query] = (req.url ?? "/").split("?", 2) as [string, string | undefined];
    const request = { method: req.method ?? "GET", path, query, headers: req.headers };
    const answer = path.startsWith("/__runtime/")
      ? internal(req, res, path)
      : withRequestAuth(start.runtime.artifact_dir, how, request, () =>
          gateway.handle(req, res, tenant || undefined),
        ).catch((err) => {
          if (!(err instanceof HttpError)) throw err;
          req.resume();
          write(res, jsonResult(err.status, err.body()));
        });
    answer.catch((err) => {
      logger.error("runtime request failed", { error: err });
      if (!res.headersSent) write(res, jsonResult(500, { error: "internal", request_id: null }));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      err.code === "EADDRINUSE" ? process.exit(RUNTIME_PORT_TAKEN_EXIT) : reject(err),
    );
    server.listen(start.port, start.host, resolve);
  });
  // The graphs load now, so the first request finds them ready.
  d.loadGraphs!().catch((err) => logger.error("the deployment's graphs failed to load", { error: err }));

  // Gone with the platform (stdin ends, readStart): a runtime never outlives the process that routes to it.
  // A newer revision took over: no new runs here; the running ones finish (or are retried from their last
  // checkpoint by the new runtime after DRAIN_MS).
  // Either way, the traces still waiting for their batch's timer are sent before the process exits.
  const exit = () => void flushRunTraces().finally(() => process.exit(0));
  process.on("SIGTERM", () => {
    draining = true;
    const deadline = Date.now() + DRAIN_MS;
    const check = () => {
      if (controllers.size === 0 || Date.now() > deadline) return exit();
      setTimeout(check, 100);
    };
    check();
  });
  // The platform is stopping (SIGINT, as Ctrl-C sends): runs in flight are retried from their last checkpoint
  // when it starts again, so only the traces are waited for.
  process.on("SIGINT", exit);
}

main().catch((err) => {
  console.error(`agent runtime failed to start: ${err?.message ?? err}`);
  process.exit(1);
});
