import { describe, expect, it } from "vitest";
import type { AuthHandlers, AuthUser } from "../../shared/agent/auth/scope.ts";
import { runAs } from "../../shared/agent/auth/scope.ts";
import type { AgentDeployment } from "../../shared/agent/deployment/deployment.ts";
import { createAgentServer, serveWith } from "../../shared/agent/ops/index.ts";
import type { HttpEvent } from "../../shared/http/event.ts";
import { handlerFrom } from "../load.ts";
import { agentModules } from "../modules/agent.ts";
import { type Route, routes } from "../routes.ts";

// Every agent-server route of the manifest reaches authorization through the agent server (ops/server.ts, built as
// a runtime builds it): each is called as a custom-auth user whose deployment's Auth refuses everything (`*` →
// false), and must be refused by the operations layer (ops/) — a 403, or, for the JSON-RPC protocols, the refusal
// as the call's error — after asking the Auth about the event, and before touching storage (the deployment here
// has none: a handler that reads or writes without asking fails on it instead); addressed to another deployment,
// each is not found by the server's one lookup before any Auth is asked. A route that is no user's resource
// (health, documents, UI files, server info) is listed below with why; a new route is in neither list until
// someone decides, so this test fails for it.

const TENANT = "t-auth-walk";
const DEPLOYMENT = "dep-auth-walk";

// The agent server the handlers are served by is a runtime's (ops/server.ts), built as the runtime's entry point
// builds it, for a deployment whose storage is a trap: its one lookup answers only this deployment.
const trap = () => {
  throw new Error("storage touched before authorization");
};
const deployment = {
  tenant_id: TENANT,
  deployment_id: DEPLOYMENT,
  scope: `${TENANT}#${DEPLOYMENT}`,
  revision_id: "r1",
  graphs: [{ graph_id: "agent" }],
  tracing_project_id: null,
  checkpointer: trap,
  store: trap,
  loadGraphs: trap,
} as unknown as AgentDeployment;
const server = createAgentServer({ runtime: deployment });

/** Routes that ask no Auth handler, and why (the reference server asks none for them either). */
const UNGUARDED: Record<string, string> = {
  "agent/ok": "public health check: says only whether a revision serves, to the deployment's own workspace",
  "agent/system/openapi": "public: the same document for every deployment",
  "agent/system/docs": "public: the reference page of the routes",
  "agent/ui/asset": "public: a file of the revision's UI bundle, which browsers load without credentials",
  "agent/system/info": "server info and flags: no user's resource",
  "agent/system/metrics": "run-queue gauges of the deployment: no user's resource",
  "agent/ui/component": "the HTML that loads a graph's UI bundle: no user's data",
  "agent/mcp/get": "405: reads nothing",
  "agent/mcp/delete": "405: reads nothing",
  "agent/custom/route": "the deployment's own custom routes (its code decides), else 404",
};

const UUID = "00000000-0000-4000-8000-000000000001";
const PARAMS: Record<string, string> = {
  deployment_id: DEPLOYMENT,
  thread_id: UUID,
  run_id: UUID,
  assistant_id: UUID,
  cron_id: UUID,
  checkpoint_id: "c1",
  namespace: "n",
  name: "agent",
  file: "x.js",
};

const run = { assistant_id: "agent" };
const message = { role: "user", messageId: "m1", parts: [{ kind: "text", text: "hi" }] };
/** A valid request of each guarded route (validation answers before authorization). */
const REQUESTS: Record<string, { body?: unknown; query?: Record<string, string> }> = {
  "agent/assistants/create": { body: { graph_id: "agent" } },
  "agent/assistants/search": { body: {} },
  "agent/assistants/count": { body: {} },
  "agent/assistants/update": { body: { name: "x" } },
  "agent/assistants/versions": { body: {} },
  "agent/assistants/latest": { body: { version: 1 } },
  "agent/threads/create": { body: {} },
  "agent/threads/search": { body: {} },
  "agent/threads/count": { body: {} },
  "agent/threads/prune": { body: { thread_ids: [UUID], strategy: "delete" } },
  "agent/threads/update": { body: { metadata: {} } },
  "agent/threads/state-update": { body: { values: {} } },
  "agent/threads/state-patch": { body: { metadata: { a: 1 } } },
  "agent/threads/state-checkpoint": { body: { checkpoint: { checkpoint_id: "c1" } } },
  "agent/threads/history": { body: {} },
  "agent/threads/copy": { body: {} },
  "agent/runs/create": { body: run },
  "agent/runs/wait": { body: run },
  "agent/runs/stream": { body: run },
  "agent/runs/stateless-create": { body: run },
  "agent/runs/stateless-wait": { body: run },
  "agent/runs/stateless-stream": { body: run },
  "agent/runs/batch": { body: [run] },
  "agent/runs/cancel-many": { body: { thread_id: UUID } },
  "agent/runs/cancel": { body: {} },
  "agent/crons/create": { body: { ...run, schedule: "* * * * *" } },
  "agent/crons/create-for-thread": { body: { ...run, schedule: "* * * * *" } },
  "agent/crons/search": { body: {} },
  "agent/crons/count": { body: {} },
  "agent/crons/update": { body: { enabled: false } },
  "agent/store/put-item": { body: { namespace: ["a"], key: "k", value: { v: 1 } } },
  "agent/store/get-item": { query: { namespace: "a", key: "k" } },
  "agent/store/delete-item": { body: { namespace: ["a"], key: "k" } },
  "agent/store/search": { body: {} },
  "agent/store/namespaces": { body: {} },
  "agent/mcp/post": { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } },
  "agent/a2a/rpc": {
    body: { jsonrpc: "2.0", id: 1, method: "message/send", params: { message } },
  },
  "agent/a2a/card": { query: { assistant_id: "agent" } },
  // Routes whose request is their path alone.
  "agent/assistants/get": {},
  "agent/assistants/delete": {},
  "agent/assistants/graph": {},
  "agent/assistants/graph-schemas": {},
  "agent/assistants/subgraphs": {},
  "agent/assistants/subgraphs-namespace": {},
  "agent/threads/get": {},
  "agent/threads/delete": {},
  "agent/threads/state-get": {},
  "agent/threads/state-at": {},
  "agent/threads/history-get": {},
  "agent/threads/join-stream": {},
  "agent/runs/list": {},
  "agent/runs/get": {},
  "agent/runs/delete": {},
  "agent/runs/join": {},
  "agent/runs/join-stream": {},
  "agent/crons/delete": {},
};

function eventOf(route: Route, params: Record<string, string> = PARAMS): HttpEvent {
  const sample = REQUESTS[route.handler] ?? {};
  const pathParameters: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/\{(\w+)\+?\}/g)) pathParameters[name] = params[name] ?? "x";
  const rawPath = route.path.replace(/\{(\w+)\+?\}/g, (_, n: string) => pathParameters[n]);
  const method = route.method === "ANY" ? "POST" : route.method;
  return {
    version: "2.0",
    routeKey: `${route.method} ${route.path}`,
    rawPath,
    rawQueryString: new URLSearchParams(sample.query ?? {}).toString(),
    headers: { "content-type": "application/json", accept: "application/json", host: "localhost" },
    queryStringParameters: sample.query,
    pathParameters,
    body: sample.body === undefined ? undefined : JSON.stringify(sample.body),
    isBase64Encoded: false,
    requestContext: {
      http: { method, path: rawPath, sourceIp: "127.0.0.1" },
      requestId: "r",
      authorizer: { lambda: { tenant_id: TENANT } },
    },
  } as unknown as HttpEvent;
}

const user = { identity: "mallory", display_name: "mallory", is_authenticated: true, permissions: [] };

/** Calls the route as the user under an Auth that refuses every event; answers what was asked and the answer. */
async function refusedCall(route: Route, params = PARAMS) {
  const asked: string[] = [];
  const handlers: AuthHandlers = {
    callbacks: {
      "*": ({ event }) => {
        asked.push(event);
        return false;
      },
    },
  };
  const handler = await loadAgentHandler(route);
  const result = await serveWith(server, () =>
    runAs(user as AuthUser, handlers, () => handler(eventOf(route, params))),
  );
  let body = result.body ?? "";
  if (result.stream) for await (const chunk of result.stream) body += chunk;
  return { asked, status: result.statusCode, body };
}

/** Refused: a 403, or a JSON-RPC error that is the Auth's refusal (MCP and A2A answer calls with HTTP 200). */
function refused(status: number, body: string): boolean {
  if (status === 403) return true;
  if (status !== 200) return false;
  const error = (JSON.parse(body) as { error?: { message?: string; data?: { status?: number } } }).error;
  return error?.data?.status === 403 || error?.message === "Forbidden";
}

/** Not found: a 404, or a JSON-RPC error saying so. */
function notFound(status: number, body: string): boolean {
  if (status === 404) return true;
  if (status !== 200) return false;
  const error = (JSON.parse(body) as { error?: { message?: string; data?: { status?: number } } }).error;
  return error?.data?.status === 404 || /not found/i.test(error?.message ?? "");
}

const loadAgentHandler = (route: Route) => handlerFrom(agentModules, route.handler);
const agentRoutes = routes.filter((r) => r.group === "agent");

describe("every agent route reaches authorization", () => {
  it("knows every agent route: guarded (with a request) or listed as unguarded with a reason", () => {
    const unknown = agentRoutes.map((r) => r.handler).filter((h) => !(h in UNGUARDED) && !(h in REQUESTS));
    expect(unknown).toEqual([]);
    const stale = [...Object.keys(UNGUARDED), ...Object.keys(REQUESTS)].filter(
      (h) => !agentRoutes.some((r) => r.handler === h),
    );
    expect(stale).toEqual([]);
  });

  for (const route of agentRoutes.filter((r) => !(r.handler in UNGUARDED))) {
    it(`${route.method} ${route.path} is refused by the caller's authorization`, async () => {
      const { asked, status, body } = await refusedCall(route);
      expect(
        asked.length,
        `${route.handler} asked no Auth handler (answered ${status} ${body})`,
      ).toBeGreaterThan(0);
      expect(refused(status, body), `${route.handler} answered ${status} ${body}`).toBe(true);
    });
  }

  // The server's one lookup comes first: a runtime's server answers only its own deployment, so every guarded route
  // addressed to another is not found before any Auth handler is asked (nothing reads storage on its own).
  for (const route of agentRoutes.filter(
    (r) => !(r.handler in UNGUARDED) && r.path.includes("{deployment_id}"),
  ))
    it(`${route.method} ${route.path} looks the deployment up through the agent server`, async () => {
      const { asked, status, body } = await refusedCall(route, {
        ...PARAMS,
        deployment_id: "another-deployment",
      });
      expect(notFound(status, body), `${route.handler} answered ${status} ${body}`).toBe(true);
      expect(asked, `${route.handler} asked the Auth before its lookup`).toEqual([]);
    });

  it("an Auth that allows lets the same call past authorization, to the storage the test deployment lacks", async () => {
    const route = agentRoutes.find((r) => r.handler === "agent/threads/get")!;
    const handler = await loadAgentHandler(route);
    const allow: AuthHandlers = { callbacks: { "*": () => ({ owner: "mallory" }) } };
    const result = await serveWith(server, () =>
      runAs(user as AuthUser, allow, () => handler(eventOf(route))),
    );
    // Past authorization the filters need the thread's metadata, which no storage here can give.
    expect(result.statusCode).toBe(500);
  });
});
