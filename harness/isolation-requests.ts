import type { MountedRoute } from "../functions/routes.ts";
import type { DeploymentData, WorkspaceData } from "./isolation-seed.ts";

// The requests of the isolation sweep (harness/isolation.ts): which id fills each path parameter, a valid
// body per route (so a request reaches its lookup instead of stopping at validation), and the requests that
// carry ids outside their path (a query, a body).
const ONCE_A_YEAR = "0 0 1 1 *";
export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
/** Path parameters that name no stored resource: a fixed value does. */
export const NOT_IDS: Record<string, string> = {
  namespace: "x",
  name: "agent",
  file: "index.js",
  "proxy+": "no-such",
};
/** Own reads that answer no 2xx by design (405 of a stateless MCP server, 404 of a path no custom route serves). */
export const OWN_READ_NOT_2XX = new Set(["agent/mcp/get", "agent/custom/route"]);
export const READ_POST = /\/(search|count|query|namespaces|history|versions)$/;
/**
 * Writes keyed by the caller's own workspace whatever id they name: the ingestion API takes a run's PATCH before
 * its POST (as LangSmith does), so a PATCH of an id the workspace never posted is accepted and kept as its own,
 * the other workspace's run untouched (the test checks that).
 */
export const KEYED_WRITES = new Set(["platform/runs/update"]);

export const paramsOf = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
export const methodsOf = (r: MountedRoute) => (r.method === "ANY" ? METHODS : [r.method]);

/** Whose ids fill a path: a workspace and one of its deployments. */
export interface Owner {
  ws: WorkspaceData;
  dep: DeploymentData;
}

export function idFor(route: MountedRoute, param: string, o: Owner): string {
  if (param in NOT_IDS) return NOT_IDS[param];
  // The v2 reads' trace is a root run.
  if (param === "trace_id") return o.ws.ids.trace_run_id;
  if (param === "run_id")
    return route.group === "agent"
      ? o.dep.agent_run_id
      : route.path.includes("bulk-exports")
        ? o.ws.ids.export_run_id
        : o.ws.ids.trace_run_id;
  const own = (o.dep as unknown as Record<string, string>)[param] ?? o.ws.ids[param];
  if (!own) throw new Error(`the isolation sweep has no id for {${param}} of ${route.routeKey}: seed one`);
  return own;
}

/** A valid body, so a request reaches its lookup rather than stopping at validation. */
export function bodyFor(r: MountedRoute, method: string, o: Owner): unknown {
  if (!["POST", "PUT", "PATCH"].includes(method)) return undefined;
  const run = { assistant_id: "agent", input: { text: "x" } };
  const bodies: Record<string, unknown> = {
    "agent/runs/create": run,
    "agent/runs/wait": run,
    "agent/runs/stream": run,
    "agent/crons/create-for-thread": { ...run, schedule: ONCE_A_YEAR },
    "agent/crons/update": { schedule: ONCE_A_YEAR },
    "agent/threads/state-update": { values: { text: "x" } },
    "agent/threads/state-patch": { metadata: { x: 1 } },
    "agent/threads/state-checkpoint": { checkpoint: { checkpoint_id: o.dep.checkpoint_id } },
    "agent/threads/update": { metadata: { x: 1 } },
    "agent/assistants/update": { metadata: { x: 1 } },
    "agent/assistants/latest": { version: 1 },
    "agent/a2a/rpc": {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "x" }] },
        configuration: { blocking: true },
      },
    },
    "platform/projects/update": { description: "x" },
    "platform/feedback/update": { comment: "x" },
    "platform/runs/update": { end_time: new Date().toISOString() },
    "platform/model-price-map/update": {
      name: "x",
      match_pattern: "^x$",
      prompt_cost: 0,
      completion_cost: 0,
      start_time: null,
    },
    "export/bulk-exports/update": { status: "Cancelled" },
    "control/listeners/update": { version: "x" },
    "control/oauth/providers-update": { name: "x" },
  };
  return bodies[r.handler] ?? {};
}

/** A request that carries ids outside its path: `refuse`, a 404/403 (422 for ids in a body); `hide` may answer. */
export interface Probe {
  handler: string;
  method: string;
  query?: string;
  body?: unknown;
  expect: "refuse" | "hide";
  ids: string[];
  /** An id the probe may have created under the caller's own path: deleted (`DELETE <path>/<id>`) right after. */
  cleanup?: string;
}

/** Exports, OAuth, run reads by project and trace, and deployments naming another's resources. */
function exportAuthAndDeployProbes(o: Owner): Probe[] {
  const { ids } = o.ws;
  return [
    {
      handler: "export/bulk-exports/create",
      method: "POST",
      body: {
        bulk_export_destination_id: ids.destination_id,
        session_id: ids.session_id,
        start_time: new Date(Date.now() - 3_600_000).toISOString(),
        end_time: new Date().toISOString(),
      },
      expect: "refuse",
      ids: [ids.destination_id, ids.session_id],
    },
    {
      handler: "platform/feedback/list",
      method: "GET",
      query: `run=${ids.trace_run_id}`,
      expect: "hide",
      ids: [ids.feedback_id],
    },
    {
      handler: "export/bulk-exports/runs-by-source",
      method: "GET",
      query: `source_bulk_export_id=${ids.export_id}`,
      expect: "refuse",
      ids: [ids.export_id],
    },
    {
      handler: "control/oauth/authenticate",
      method: "POST",
      body: { provider: ids.provider_id },
      expect: "refuse",
      ids: [ids.provider_id],
    },
    {
      handler: "control/oauth/tokens-exists",
      method: "GET",
      query: `provider_id=${ids.provider_id}`,
      expect: "hide",
      ids: [ids.provider_id],
    },
    {
      handler: "control/oauth/tokens-list",
      method: "GET",
      query: `provider_id=${ids.provider_id}`,
      expect: "hide",
      ids: [ids.provider_id],
    },
    {
      handler: "platform/runs/query",
      method: "POST",
      body: { session: [ids.session_id] },
      expect: "hide",
      ids: [ids.session_id],
    },
    {
      handler: "platform/runs/query",
      method: "POST",
      body: { trace: ids.trace_run_id },
      expect: "hide",
      ids: [ids.trace_run_id],
    },
    {
      handler: "control/deployments/create",
      method: "POST",
      body: {
        name: `iso-probe-${crypto.randomUUID().slice(0, 8)}`,
        source: "github",
        source_config: {
          repo_url: "https://github.com/example/agent",
          integration_id: ids.integration_id,
          listener_id: ids.listener_id,
          deployment_type: "dev",
          build_on_push: false,
        },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      },
      expect: "refuse",
      ids: [ids.integration_id, ids.listener_id],
    },
    {
      handler: "control/deployments/update",
      method: "PATCH",
      body: { source_config: { integration_id: ids.integration_id, listener_id: ids.listener_id } },
      expect: "refuse",
      ids: [ids.integration_id, ids.listener_id],
    },
  ];
}

/** A thread or assistant of the caller's own made with the other's id: never theirs. */
function ownCopyProbes(o: Owner): Probe[] {
  return [
    {
      // A thread of the caller's own with the other's thread id, if one exists "do nothing": never theirs.
      handler: "agent/threads/create",
      method: "POST",
      body: { thread_id: o.dep.thread_id, if_exists: "do_nothing" },
      expect: "hide",
      ids: [o.dep.thread_id],
      cleanup: o.dep.thread_id,
    },
    {
      handler: "agent/assistants/create",
      method: "POST",
      body: { assistant_id: o.dep.assistant_id, graph_id: "agent", if_exists: "do_nothing" },
      expect: "hide",
      ids: [o.dep.assistant_id],
      cleanup: o.dep.assistant_id,
    },
  ];
}

/** Run reads by id, the v2 reads and the run stats naming another's project, trace or run. */
function runReadProbes(o: Owner): Probe[] {
  const { ids } = o.ws;
  return [
    {
      handler: "platform/runs/query",
      method: "POST",
      body: { id: [ids.trace_run_id] },
      expect: "hide",
      ids: [ids.trace_run_id],
    },
    // The v2 reads name their project in the body: another's project shows nothing of theirs.
    ...(["platform/v2/runs-query", "platform/v2/traces-query", "platform/v2/threads-query"] as const).map(
      (handler) => ({
        handler,
        method: "POST" as const,
        body:
          handler === "platform/v2/runs-query"
            ? { project_ids: [ids.session_id] }
            : { project_id: ids.session_id },
        expect: "hide" as const,
        ids: [ids.session_id, ids.trace_run_id],
      }),
    ),
    // The run stats read through the same query: another's project, trace or run counts nothing of theirs.
    ...[{ session: [ids.session_id] }, { trace: ids.trace_run_id }, { id: [ids.trace_run_id] }].map(
      (body) => ({
        handler: "platform/runs/stats",
        method: "POST" as const,
        body,
        expect: "hide" as const,
        ids: Object.values(body).flat(),
      }),
    ),
  ];
}

/** The store, thread and cron searches, the A2A card and runs naming another deployment's resources. */
function agentReadProbes(o: Owner): Probe[] {
  const ns = o.dep.store_namespace;
  return [
    {
      handler: "agent/store/get-item",
      method: "GET",
      query: `namespace=${ns.join(".")}&key=${o.dep.store_key}`,
      expect: "hide",
      ids: [ns[0]],
    },
    {
      handler: "agent/store/search",
      method: "POST",
      body: { namespace_prefix: ns },
      expect: "hide",
      ids: [ns[0]],
    },
    {
      handler: "agent/store/namespaces",
      method: "POST",
      body: { prefix: ns },
      expect: "hide",
      ids: [ns[0]],
    },
    {
      handler: "agent/threads/search",
      method: "POST",
      body: { ids: [o.dep.thread_id] },
      expect: "hide",
      ids: [o.dep.thread_id],
    },
    {
      handler: "agent/crons/search",
      method: "POST",
      body: { thread_id: o.dep.thread_id },
      expect: "hide",
      ids: [o.dep.thread_id],
    },
    {
      handler: "agent/a2a/card",
      method: "GET",
      query: `assistant_id=${o.dep.assistant_id}`,
      expect: "refuse",
      ids: [o.dep.assistant_id],
    },
    {
      handler: "agent/runs/stateless-wait",
      method: "POST",
      body: { assistant_id: o.dep.assistant_id, input: { text: "x" } },
      expect: "refuse",
      ids: [o.dep.assistant_id],
    },
    {
      handler: "agent/crons/create",
      method: "POST",
      body: { assistant_id: o.dep.assistant_id, schedule: ONCE_A_YEAR },
      expect: "refuse",
      ids: [o.dep.assistant_id],
    },
  ];
}

export function idsOutsidePath(o: Owner): Probe[] {
  return [...exportAuthAndDeployProbes(o), ...ownCopyProbes(o), ...runReadProbes(o), ...agentReadProbes(o)];
}
