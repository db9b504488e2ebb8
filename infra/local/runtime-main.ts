import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { loadRuntimeHandler } from "../../functions/modules/runtime.ts";
import { mountedRoutes, servedByRuntime } from "../../functions/routes.ts";
import type { WebhookSender } from "../../shared/agent/deployment/deployment.ts";
import { createAgentServer, serveWith } from "../../shared/agent/ops/index.ts";
import { kick } from "../../shared/agent/runs/worker.ts";
import { loadCustomAuth, type RouterAuth, withRequestAuth } from "../../shared/agent/runtime/custom-auth.ts";
import { customRouteAnswer } from "../../shared/agent/runtime/custom-routes.ts";
import { askingDrains, DRAIN_HEADER, drainHeaderValue } from "../../shared/agent/runtime/drain-asks.ts";
import { openRuntimeEnv } from "../../shared/agent/runtime/sealed-env.ts";
import { graphNodes, startRuntime } from "../../shared/agent/runtime/serve.ts";
import { controllers } from "../../shared/agent/stream/broker.ts";
import { flushRunTraces } from "../../shared/agent/tracing/run-tracing.ts";
import { requestStats } from "../../shared/aws/request-stats.ts";
import { config, sealSettings, setEnvironment } from "../../shared/config.ts";
import { installEgress } from "../../shared/containment/process-egress.ts";
import { secretHash, secretMatches } from "../../shared/crypto/secret-hash.ts";
import { HttpError } from "../../shared/errors.ts";
import { logger } from "../../shared/log.ts";
import type { IngestResult } from "../../shared/runs/store.ts";
import { Gateway, jsonResult, write } from "./gateway.ts";
import { callSocket, readBody } from "./http-util.ts";
import {
  type LocalRuntimeStart,
  PLATFORM_SOCKET,
  ROUTER_AUTH_HEADER,
  ROUTER_TENANT_HEADER,
  RUNTIME_SOCKET,
  RUNTIME_TOKEN_HEADER,
} from "./runtime-protocol.ts";
import { TRACES_PATH, WEBHOOK_PATH } from "./runtime-socket.ts";

// A deployment's runtime on the local cloud: a child process of the platform (runtimes.ts starts it in the OS
// sandbox), serving that one deployment on a Unix socket. What it is told arrives on stdin, not in its
// environment: the token that proves a request came from the platform's router, its socket folder, the
// platform's settings for it (sealed: config reads them, process.env never holds them). Its network is set up
// (runtime-net.ts) before any of the deployment's code loads. It exits when its parent goes away (stdin closes),
// and when the platform asks (POST /__runtime/stop: "now" after sending its traces, "drain" once its runs ended).
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

/** The runtime's traces and webhook asks, sent to the platform over its socket. */
function socketTransports(platformSocket: string) {
  const sendTraces = async (
    _tenant: string,
    posts: unknown[],
    patches: { id: string; body: unknown }[],
  ): Promise<IngestResult> => {
    const res = await callSocket(platformSocket, "POST", TRACES_PATH, { body: { posts, patches } });
    if (res.status !== 200) throw new Error(`trace ingestion answered ${res.status}`);
    return JSON.parse(res.text) as IngestResult;
  };
  // Webhooks go out through the platform, which takes the URL and the run from the run's record and builds the
  // body itself: the runtime tells it only which run ended and how (its values, its error message).
  const webhooks: WebhookSender = async (run, outcome) => {
    const res = await callSocket(platformSocket, "POST", WEBHOOK_PATH, {
      body: { thread_id: run.thread_id, run_id: run.run_id, ...outcome },
    });
    if (res.status !== 200) return `the platform answered ${res.status}`;
    return (JSON.parse(res.text) as { failure: string | null }).failure ?? undefined;
  };
  return { sendTraces, webhooks };
}

/** How the runtime stops, and whether it is draining; SIGINT and SIGTERM handled. */
function stopping() {
  let draining = false;
  // Gone with the platform (stdin ends, readStart): a runtime never outlives the process that routes to it.
  // The platform is stopping ("now"): runs in flight are retried from their last checkpoint when it starts again,
  // so only the traces still waiting for their batch's timer are sent before the process exits.
  // A newer revision took over ("drain"): no new runs here; the running ones finish (or are retried from their
  // last checkpoint by the new runtime after DRAIN_MS), then the traces are sent and it exits.
  const exit = () => void flushRunTraces().finally(() => process.exit(0));
  const drain = () => {
    draining = true;
    const deadline = Date.now() + DRAIN_MS;
    const check = () => {
      if (controllers.size === 0 || Date.now() > deadline) return exit();
      setTimeout(check, 100);
    };
    check();
  };
  // Unsandboxed, a terminal's Ctrl-C reaches this process too (the sandbox starts a session of its own).
  process.on("SIGINT", exit);
  process.on("SIGTERM", drain);
  return { exit, drain, draining: () => draining };
}

/** The platform's own calls to the runtime (/__runtime/…): health, stats, stop and kick. */
function internalRoutes(
  artifactDir: string,
  d: ReturnType<typeof startRuntime>,
  platformKick: (threadId: string) => Promise<void>,
  stop: ReturnType<typeof stopping>,
) {
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === "/__runtime/health") {
      await loadCustomAuth(artifactDir);
      // The deploy step's health check reads each graph's nodes (or why it failed to load), as in AWS.
      return write(res, jsonResult(200, { ok: true, pid: process.pid, graphs: await graphNodes(d) }));
    }
    if (path === "/__runtime/stats" && config.countRequests !== undefined)
      return write(res, jsonResult(200, { pid: process.pid, requests: requestStats() }));
    if (path === "/__runtime/stop" && req.method === "POST") {
      const { mode } = JSON.parse((await readBody(req, 4096)).toString("utf8") || "{}");
      write(res, jsonResult(202, { stopping: mode === "drain" ? "drain" : "now" }));
      if (mode === "drain") stop.drain();
      else stop.exit();
      return;
    }
    if (path === "/__runtime/kick" && req.method === "POST") {
      const { thread_id } = JSON.parse((await readBody(req, 4096)).toString("utf8") || "{}");
      if (typeof thread_id !== "string") return write(res, jsonResult(422, { detail: "thread_id" }));
      if (!stop.draining()) await platformKick(thread_id);
      return write(res, jsonResult(202, { kicked: !stop.draining() }));
    }
    return write(res, jsonResult(404, { detail: "Not Found" }));
  };
}

/** The runtime: told what to serve on its stdin, it serves its deployment on its socket until told to stop. */
async function main() {
  const start = await readStart();
  // The entry point's one parse of its settings: the environment and the sealed ones (a bad value stops it here).
  sealSettings(start.settings);
  const platformSocket = join(start.socket_dir, PLATFORM_SOCKET);
  await installEgress(platformSocket);
  const expected = secretHash(start.token);
  const trusted = (req: IncomingMessage) =>
    secretMatches(String(req.headers[RUNTIME_TOKEN_HEADER] ?? ""), expected);
  const { sendTraces, webhooks } = socketTransports(platformSocket);
  // Its own environment (secrets, langgraph.json env), opened before any graph is imported, as in AWS.
  const sealedEnv = config.agent.runtimeSecrets;
  if (sealedEnv) {
    setEnvironment(
      await openRuntimeEnv(JSON.parse(sealedEnv), start.runtime.tenant_id, start.runtime.deployment_id),
    );
  }
  const d = startRuntime(start.runtime, { traces: sendTraces, webhooks });
  // The agent server of this runtime: its one deployment, whose runs execute here; every request is served by it.
  const agent = createAgentServer({ runtime: d });
  // The platform's kick. AGENT_RUN_WORKER=lambda: it plays the drain invocation AWS would start (functions/agent/
  // runtime.ts), a call that shares no broker with the request side, so streams, waits and cancels take the same
  // durable paths; it answers once the drain ends, as that invocation does, so the local Lambda service holds the
  // drain's slot of the function's reservation as long as AWS would.
  const platformKick = async (threadId: string) => {
    if (config.agent.runWorker !== "lambda") return kick(d, threadId);
    await agent.runs
      .drain(d, threadId, Date.now() + 14 * 60_000)
      .catch((err) => logger.error("run drain failed", { error: err }));
  };
  const gateway = new Gateway({
    routes: mountedRoutes().filter(servedByRuntime),
    loader: loadRuntimeHandler,
    // CORS is the platform's gateway's (it answers preflights and adds the headers to what this answers).
    cors: false,
    // langgraph.json http: the custom routes (http.app) answer first; disabled route groups answer 404.
    intercept: (event, route) => customRouteAnswer(d.runtime!.artifact, event, route),
  });
  await gateway.load();
  const stop = stopping();

  const internal = internalRoutes(start.runtime.artifact_dir, d, platformKick, stop);

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
    // Runs the request stores pending are started by the platform, which 103 answers ask to (drain-asks.ts);
    // Node sends a 103 only with a Link header, which the platform drops with the rest of the 103.
    const askDrain = (threadId: string) => {
      if (res.headersSent) return false;
      res.writeEarlyHints({ link: "</>", [DRAIN_HEADER]: drainHeaderValue(threadId) });
      return true;
    };
    const answer = path.startsWith("/__runtime/")
      ? internal(req, res, path)
      : serveWith(agent, () =>
          askingDrains(askDrain, () =>
            withRequestAuth(start.runtime.artifact_dir, how, request, () =>
              gateway.handle(req, res, tenant || undefined),
            ),
          ),
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
    server.once("error", reject);
    server.listen(join(start.socket_dir, RUNTIME_SOCKET), resolve);
  });
  // The graphs load now, so the first request finds them ready.
  d.loadGraphs!().catch((err) => logger.error("the deployment's graphs failed to load", { error: err }));
}

main().catch((err) => {
  console.error(`agent runtime failed to start: ${err?.message ?? err}`);
  process.exit(1);
});
