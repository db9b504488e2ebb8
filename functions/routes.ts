import { SELF_HOSTED_PREFIX } from "../shared/config.ts";

// THE route manifest: every HTTP endpoint as data. The local gateway, the CDK API (one Lambda per
// route) and the OpenAPI document are generated from this list; nothing else declares a route.
/** `ANY`: every method but OPTIONS (CORS preflights stay the gateway's and the router's). */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "ANY";
/** API groups: each becomes its own nested stack in AWS. `control` routes also answer under /api-host. */
export type Group = "system" | "control" | "platform" | "export" | "agent";

export interface Route {
  method: Method;
  /** API Gateway syntax: `{name}` for a path parameter. */
  path: string;
  /** Module under functions/ (without .ts) exporting `handler`. */
  handler: string;
  auth: boolean;
  group: Group;
  summary: string;
  /** The response is a stream (SSE): in AWS its function streams through a REST API (Lambda response streaming). */
  stream?: boolean;
  /** An agent-server route answered by platform code, not the deployment's runtime (it reads shared indexes). */
  platform?: boolean;
  /** A long-poll: the handler holds the request until an event (or its wait) ends, not while it works. */
  longPoll?: boolean;
}

interface RouteOptions {
  /** false: answered without an API key (health, documents, a redirect whose own state authenticates it). */
  auth?: false;
  stream?: true;
  platform?: true;
  longPoll?: true;
}
type RouteTuple = readonly [Method, string, string, string, RouteOptions?];
/** A route that needs no API key. */
const PUBLIC: RouteOptions = { auth: false };

/** Routes of one group, each written as [method, path, handler, summary, options?]: with auth unless it says not. */
function grouped(group: Group, list: readonly RouteTuple[]): Route[] {
  return list.map(([method, path, handler, summary, options]) => ({
    method,
    path,
    handler,
    auth: options?.auth ?? true,
    group,
    summary,
    ...(options?.stream ? { stream: true } : {}),
    ...(options?.platform ? { platform: true } : {}),
    ...(options?.longPoll ? { longPoll: true } : {}),
  }));
}

export const routes: Route[] = [
  ...grouped("system", [
    ["GET", "/ok", "system/ok", "Health check", PUBLIC],
    ["GET", "/openapi.json", "system/openapi", "OpenAPI document", PUBLIC],
  ]),
  ...grouped("platform", [
    ["GET", "/api/v1/info", "platform/info", "Server info and ingestion limits", PUBLIC],
    // — API keys of the workspace (made by the operator: npm run create-key) —
    ["GET", "/api/v1/api-key", "platform/api-keys/list", "List the workspace's API keys (never the keys)"],
    [
      "DELETE",
      "/api/v1/api-key/{api_key_id}",
      "platform/api-keys/revoke",
      "Revoke an API key of the workspace",
    ],
    // — trace projects (sessions) —
    ["POST", "/api/v1/sessions", "platform/projects/create", "Create a tracing project"],
    ["GET", "/api/v1/sessions", "platform/projects/list", "List tracing projects"],
    ["GET", "/api/v1/sessions/{session_id}", "platform/projects/get", "Read a tracing project"],
    ["PATCH", "/api/v1/sessions/{session_id}", "platform/projects/update", "Update a tracing project"],
    ["DELETE", "/api/v1/sessions/{session_id}", "platform/projects/delete", "Delete a tracing project"],
    // — model price map —
    ["GET", "/api/v1/model-price-map", "platform/model-price-map/list", "List the model price map"],
    ["POST", "/api/v1/model-price-map", "platform/model-price-map/create", "Add a model price entry"],
    ["PUT", "/api/v1/model-price-map/{id}", "platform/model-price-map/update", "Replace a model price entry"],
    [
      "DELETE",
      "/api/v1/model-price-map/{id}",
      "platform/model-price-map/delete",
      "Delete a model price entry",
    ],
  ]),
  // — runs —
  ...grouped("platform", [
    ["POST", "/api/v1/runs", "platform/runs/create", "Create a run"],
    ["PATCH", "/api/v1/runs/{run_id}", "platform/runs/update", "Update (end) a run"],
    ["POST", "/api/v1/runs/batch", "platform/runs/batch", "Create and update runs in one request"],
    [
      "POST",
      "/api/v1/runs/multipart",
      "platform/runs/multipart",
      "Create and update runs, multipart (the SDK default)",
    ],
    ["GET", "/api/v1/runs/{run_id}", "platform/runs/get", "Read a run"],
    ["POST", "/api/v1/runs/query", "platform/runs/query", "Query runs with the filter language"],
    ["POST", "/api/v1/runs/stats", "platform/runs/stats", "Figures over the runs the filters match"],
    // — the v2 reads (the langsmith SDK's runs, traces and threads resources) —
    ["POST", "/api/v2/runs/query", "platform/v2/runs-query", "Query runs (v2: selects, cursor)"],
    ["GET", "/api/v2/runs/{run_id}", "platform/v2/runs-get", "Read a run of a project (v2)"],
    ["POST", "/api/v2/traces/query", "platform/v2/traces-query", "Query a project's traces (root runs)"],
    ["GET", "/api/v2/traces/{trace_id}/runs", "platform/v2/trace-runs", "A trace's runs in start order"],
    ["POST", "/api/v2/threads/query", "platform/v2/threads-query", "Query a project's conversation threads"],
    [
      "GET",
      "/api/v2/threads/{thread_id}/traces",
      "platform/v2/thread-traces",
      "A thread's traces in turn order",
    ],
    [
      "POST",
      "/api/v1/otel/v1/traces",
      "platform/otel/traces",
      "OpenTelemetry (OTLP/HTTP) trace export: spans become runs",
    ],
    // — feedback —
    ["POST", "/api/v1/feedback", "platform/feedback/create", "Give feedback on a run"],
    ["GET", "/api/v1/feedback", "platform/feedback/list", "List feedback (by run, key, source)"],
    ["GET", "/api/v1/feedback/{feedback_id}", "platform/feedback/get", "Read a feedback"],
    ["PATCH", "/api/v1/feedback/{feedback_id}", "platform/feedback/update", "Change a feedback"],
    ["DELETE", "/api/v1/feedback/{feedback_id}", "platform/feedback/delete", "Delete a feedback"],
    // — feedback configs (one per feedback key: its scale, which new feedback of the key must keep to) —
    ["POST", "/api/v1/feedback-configs", "platform/feedback-configs/create", "Store a feedback key's config"],
    ["GET", "/api/v1/feedback-configs", "platform/feedback-configs/list", "List feedback configs"],
    [
      "PATCH",
      "/api/v1/feedback-configs",
      "platform/feedback-configs/update",
      "Change a feedback key's config",
    ],
    [
      "DELETE",
      "/api/v1/feedback-configs",
      "platform/feedback-configs/delete",
      "Delete a feedback key's config",
    ],
  ]),
  // — bulk export —
  ...grouped("export", [
    [
      "POST",
      "/api/v1/bulk-exports/destinations",
      "export/destinations/create",
      "Create an export destination (S3)",
    ],
    ["GET", "/api/v1/bulk-exports/destinations", "export/destinations/list", "List export destinations"],
    [
      "GET",
      "/api/v1/bulk-exports/destinations/{destination_id}",
      "export/destinations/get",
      "Read an export destination",
    ],
    [
      "POST",
      "/api/v1/bulk-exports",
      "export/bulk-exports/create",
      "Create a bulk export (or a scheduled one)",
    ],
    ["GET", "/api/v1/bulk-exports", "export/bulk-exports/list", "List bulk exports"],
    [
      "GET",
      "/api/v1/bulk-exports/runs",
      "export/bulk-exports/runs-by-source",
      "Runs of the exports spawned by a scheduled export",
    ],
    ["GET", "/api/v1/bulk-exports/{export_id}", "export/bulk-exports/get", "Read a bulk export"],
    ["PATCH", "/api/v1/bulk-exports/{export_id}", "export/bulk-exports/update", "Cancel a bulk export"],
    [
      "GET",
      "/api/v1/bulk-exports/{export_id}/runs",
      "export/bulk-exports/runs",
      "List the runs of a bulk export",
    ],
    [
      "GET",
      "/api/v1/bulk-exports/{export_id}/runs/{run_id}",
      "export/bulk-exports/run",
      "Read one run of a bulk export",
    ],
  ]),
  // — control plane: deployments and revisions —
  ...grouped("control", [
    ["POST", "/v2/deployments", "control/deployments/create", "Create a deployment (and its first revision)"],
    ["GET", "/v2/deployments", "control/deployments/list", "List deployments"],
    ["GET", "/v2/deployments/{deployment_id}", "control/deployments/get", "Read a deployment"],
    [
      "PATCH",
      "/v2/deployments/{deployment_id}",
      "control/deployments/update",
      "Update a deployment (source_revision_config → new revision)",
    ],
    ["DELETE", "/v2/deployments/{deployment_id}", "control/deployments/delete", "Delete a deployment"],
    [
      "GET",
      "/v2/deployments/{deployment_id}/revisions",
      "control/deployments/revisions",
      "List a deployment's revisions, newest first",
    ],
    [
      "GET",
      "/v2/deployments/{deployment_id}/revisions/{revision_id}",
      "control/deployments/revision",
      "Read a revision",
    ],
    [
      "GET",
      "/v2/deployments/{deployment_id}/revisions/{revision_id}/logs",
      "control/deployments/revision-logs",
      "Build and deploy logs of a revision",
    ],
    [
      "POST",
      "/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy",
      "control/deployments/redeploy",
      "Redeploy a revision (as a new revision)",
    ],
  ]),
  // — control plane: listeners (v2) and source-code integrations (v1) —
  ...grouped("control", [
    ["GET", "/v2/listeners", "control/listeners/list", "List listeners"],
    ["POST", "/v2/listeners", "control/listeners/create", "Create a listener"],
    ["GET", "/v2/listeners/{listener_id}", "control/listeners/get", "Read a listener"],
    ["PATCH", "/v2/listeners/{listener_id}", "control/listeners/update", "Update a listener"],
    ["DELETE", "/v2/listeners/{listener_id}", "control/listeners/delete", "Delete a listener"],
    ["GET", "/v1/integrations/github/install", "control/integrations/list", "List source-code integrations"],
    [
      "POST",
      "/v1/integrations/github",
      "control/integrations/create",
      "Register a source-code integration (token write-only)",
    ],
    [
      "PATCH",
      "/v1/integrations/github/{integration_id}",
      "control/integrations/update",
      "Rename an integration or set its webhook secret (write-only)",
    ],
    [
      "DELETE",
      "/v1/integrations/github/{integration_id}",
      "control/integrations/delete",
      "Delete a source-code integration",
    ],
    // GitHub sends no API key: the delivery's signature (the integration's webhook secret) authenticates it.
    [
      "POST",
      "/v1/integrations/github/webhook",
      "control/integrations/webhook",
      "GitHub webhook receiver (build_on_push): push deliveries signed with the integration's webhook secret",
      PUBLIC,
    ],
    [
      "GET",
      "/v1/integrations/github/{integration_id}/repos",
      "control/integrations/repos",
      "Repositories an integration can read",
    ],
  ]),
  // — control plane: auth service (OAuth providers, the authorization-code flow, tokens) —
  ...grouped("control", [
    ["GET", "/v2/auth/providers", "control/oauth/providers-list", "List OAuth providers"],
    [
      "POST",
      "/v2/auth/providers",
      "control/oauth/providers-create",
      "Create an OAuth provider (client_secret write-only)",
    ],
    ["GET", "/v2/auth/providers/{provider_id}", "control/oauth/providers-get", "Read an OAuth provider"],
    [
      "PATCH",
      "/v2/auth/providers/{provider_id}",
      "control/oauth/providers-update",
      "Update an OAuth provider",
    ],
    [
      "DELETE",
      "/v2/auth/providers/{provider_id}",
      "control/oauth/providers-delete",
      "Delete an OAuth provider",
    ],
    [
      "POST",
      "/v2/auth/authenticate",
      "control/oauth/authenticate",
      "Start (or short-cut) the OAuth authorization-code flow",
    ],
    [
      "GET",
      "/v2/auth/wait/{auth_id}",
      "control/oauth/wait",
      "Wait for an OAuth flow to complete",
      { longPoll: true },
    ],
    [
      "GET",
      "/v2/auth/tokens",
      "control/oauth/tokens-list",
      "List the caller's OAuth tokens (never their values)",
    ],
    ["DELETE", "/v2/auth/tokens/{token_id}", "control/oauth/tokens-delete", "Delete an OAuth token"],
    [
      "GET",
      "/v2/auth/tokens/exists",
      "control/oauth/tokens-exists",
      "Whether the caller has an OAuth token for a provider",
    ],
    // The provider redirects the user's browser here: no API key; the flow's `state` authenticates it.
    [
      "GET",
      "/v2/auth/callback/{provider_id}",
      "control/oauth/callback",
      "OAuth redirect target: exchanges the code for a token",
      PUBLIC,
    ],
  ]),
  // — agent server (per deployment) —
  ...grouped("agent", [
    [
      "GET",
      "/agents/{deployment_id}/ok",
      "agent/ok",
      "Health of a deployment's agent server (answers once a revision is deployed)",
      PUBLIC,
    ],
    // — agent server: assistants and system —
    ["POST", "/agents/{deployment_id}/assistants", "agent/assistants/create", "Create an assistant"],
    ["POST", "/agents/{deployment_id}/assistants/search", "agent/assistants/search", "Search assistants"],
    ["POST", "/agents/{deployment_id}/assistants/count", "agent/assistants/count", "Count assistants"],
    ["GET", "/agents/{deployment_id}/assistants/{assistant_id}", "agent/assistants/get", "Read an assistant"],
    [
      "PATCH",
      "/agents/{deployment_id}/assistants/{assistant_id}",
      "agent/assistants/update",
      "Update an assistant (a new version)",
    ],
    [
      "DELETE",
      "/agents/{deployment_id}/assistants/{assistant_id}",
      "agent/assistants/delete",
      "Delete an assistant and its versions",
    ],
    [
      "GET",
      "/agents/{deployment_id}/assistants/{assistant_id}/graph",
      "agent/assistants/graph",
      "The assistant's graph, drawable (nodes and edges)",
    ],
    [
      "GET",
      "/agents/{deployment_id}/assistants/{assistant_id}/schemas",
      "agent/assistants/graph-schemas",
      "JSON schemas of the assistant's graph",
    ],
    [
      "GET",
      "/agents/{deployment_id}/assistants/{assistant_id}/subgraphs",
      "agent/assistants/subgraphs",
      "Schemas of the graph's subgraphs",
    ],
    [
      "GET",
      "/agents/{deployment_id}/assistants/{assistant_id}/subgraphs/{namespace}",
      "agent/assistants/subgraphs-namespace",
      "Schemas of the subgraphs under a namespace",
    ],
    [
      "POST",
      "/agents/{deployment_id}/assistants/{assistant_id}/versions",
      "agent/assistants/versions",
      "List an assistant's versions",
    ],
    [
      "POST",
      "/agents/{deployment_id}/assistants/{assistant_id}/latest",
      "agent/assistants/latest",
      "Make a version the assistant's current one",
    ],
    ["GET", "/agents/{deployment_id}/info", "agent/system/info", "Agent server info and flags"],
    [
      "GET",
      "/agents/{deployment_id}/metrics",
      "agent/system/metrics",
      "Run-queue metrics (Prometheus text, or format=json)",
      // The active-runs index holds every deployment's runs, which a runtime's role may not read.
      { platform: true },
    ],
    [
      "GET",
      "/agents/{deployment_id}/openapi.json",
      "agent/system/openapi",
      "OpenAPI document of the agent server",
      PUBLIC,
    ],
    [
      "GET",
      "/agents/{deployment_id}/docs",
      "agent/system/docs",
      "Reference documentation of the agent server (HTML)",
      PUBLIC,
    ],
  ]),
  // (end of agent server: assistants and system)
  // — agent server: threads and runs —
  ...grouped("agent", [
    ["POST", "/agents/{deployment_id}/threads", "agent/threads/create", "Create a thread"],
    ["POST", "/agents/{deployment_id}/threads/search", "agent/threads/search", "Search threads"],
    ["POST", "/agents/{deployment_id}/threads/count", "agent/threads/count", "Count threads"],
    [
      "POST",
      "/agents/{deployment_id}/threads/prune",
      "agent/threads/prune",
      "Prune threads (delete them, or keep only their latest state)",
    ],
    ["GET", "/agents/{deployment_id}/threads/{thread_id}", "agent/threads/get", "Read a thread"],
    [
      "PATCH",
      "/agents/{deployment_id}/threads/{thread_id}",
      "agent/threads/update",
      "Update a thread's metadata",
    ],
    [
      "DELETE",
      "/agents/{deployment_id}/threads/{thread_id}",
      "agent/threads/delete",
      "Delete a thread with its runs and checkpoints",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/state",
      "agent/threads/state-get",
      "A thread's latest state",
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/state",
      "agent/threads/state-update",
      "Update a thread's state",
    ],
    [
      "PATCH",
      "/agents/{deployment_id}/threads/{thread_id}/state",
      "agent/threads/state-patch",
      "Patch the metadata of a thread's latest checkpoint",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/state/{checkpoint_id}",
      "agent/threads/state-at",
      "A thread's state at a checkpoint",
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/state/checkpoint",
      "agent/threads/state-checkpoint",
      "A thread's state at a checkpoint (given as an object)",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/history",
      "agent/threads/history-get",
      "A thread's past states",
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/history",
      "agent/threads/history",
      "A thread's past states, filtered",
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/copy",
      "agent/threads/copy",
      "Copy a thread with its checkpoints",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/stream",
      "agent/threads/join-stream",
      "Join a thread's stream: each of its runs as it happens (SSE)",
      { stream: true },
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/runs",
      "agent/runs/create",
      "Create a background run",
    ],
    ["GET", "/agents/{deployment_id}/threads/{thread_id}/runs", "agent/runs/list", "List a thread's runs"],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/runs/wait",
      "agent/runs/wait",
      "Create a run and wait for its final values",
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/runs/stream",
      "agent/runs/stream",
      "Create a run and stream it (SSE)",
      { stream: true },
    ],
    ["GET", "/agents/{deployment_id}/threads/{thread_id}/runs/{run_id}", "agent/runs/get", "Read a run"],
    [
      "DELETE",
      "/agents/{deployment_id}/threads/{thread_id}/runs/{run_id}",
      "agent/runs/delete",
      "Delete a finished run",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/join",
      "agent/runs/join",
      "Wait for a run; its final values",
    ],
    [
      "GET",
      "/agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/stream",
      "agent/runs/join-stream",
      "Join a run's stream (SSE, Last-Event-ID resumes)",
      { stream: true },
    ],
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/cancel",
      "agent/runs/cancel",
      "Cancel a run (interrupt or rollback)",
    ],
    [
      "POST",
      "/agents/{deployment_id}/runs/cancel",
      "agent/runs/cancel-many",
      "Cancel runs by thread, ids or status",
    ],
    [
      "POST",
      "/agents/{deployment_id}/runs",
      "agent/runs/stateless-create",
      "Create a stateless background run",
    ],
    [
      "POST",
      "/agents/{deployment_id}/runs/wait",
      "agent/runs/stateless-wait",
      "Run statelessly and wait for the final values",
    ],
    [
      "POST",
      "/agents/{deployment_id}/runs/stream",
      "agent/runs/stateless-stream",
      "Run statelessly, streamed (SSE)",
      { stream: true },
    ],
    [
      "POST",
      "/agents/{deployment_id}/runs/batch",
      "agent/runs/batch",
      "Create several stateless background runs",
    ],
  ]),
  // (end of agent server: threads and runs)
  // — agent server: MCP (Streamable HTTP, stateless: one tool per assistant, shared/agent/protocols/mcp.ts) —
  ...grouped("agent", [
    ["POST", "/agents/{deployment_id}/mcp", "agent/mcp/post", "MCP over Streamable HTTP (JSON-RPC 2.0)"],
    ["GET", "/agents/{deployment_id}/mcp", "agent/mcp/get", "MCP: no SSE stream (405, stateless server)"],
    ["DELETE", "/agents/{deployment_id}/mcp", "agent/mcp/delete", "MCP: no session to end (405, stateless)"],
  ]),
  // (end of agent server: MCP)
  // — agent server: the store (the deployment's DynamoStore, the one its graphs write) —
  ...grouped("agent", [
    ["PUT", "/agents/{deployment_id}/store/items", "agent/store/put-item", "Store or replace a store item"],
    ["GET", "/agents/{deployment_id}/store/items", "agent/store/get-item", "Read a store item"],
    ["DELETE", "/agents/{deployment_id}/store/items", "agent/store/delete-item", "Delete a store item"],
    ["POST", "/agents/{deployment_id}/store/items/search", "agent/store/search", "Search store items"],
    ["POST", "/agents/{deployment_id}/store/namespaces", "agent/store/namespaces", "List store namespaces"],
  ]),
  // (end of agent server: the store)
  // — agent server: crons (ticks fire in the AgentCronTick task, shared/agent/crons/crons.ts) —
  ...grouped("agent", [
    [
      "POST",
      "/agents/{deployment_id}/threads/{thread_id}/runs/crons",
      "agent/crons/create-for-thread",
      "Create a cron that runs on a thread",
    ],
    ["POST", "/agents/{deployment_id}/runs/crons", "agent/crons/create", "Create a stateless cron"],
    ["POST", "/agents/{deployment_id}/runs/crons/search", "agent/crons/search", "Search crons"],
    ["POST", "/agents/{deployment_id}/runs/crons/count", "agent/crons/count", "Count crons"],
    ["PATCH", "/agents/{deployment_id}/runs/crons/{cron_id}", "agent/crons/update", "Update a cron"],
    ["DELETE", "/agents/{deployment_id}/runs/crons/{cron_id}", "agent/crons/delete", "Delete a cron"],
  ]),
  // (end of agent server: crons)
  // — agent server: A2A, the Agent2Agent protocol 0.3 (shared/agent/protocols/a2a.ts) —
  ...grouped("agent", [
    [
      "POST",
      "/agents/{deployment_id}/a2a/{assistant_id}",
      "agent/a2a/rpc",
      "A2A JSON-RPC of an assistant (message/send, message/stream, tasks/get, tasks/cancel)",
      { stream: true },
    ],
    [
      "GET",
      "/agents/{deployment_id}/.well-known/agent-card.json",
      "agent/a2a/card",
      "A2A agent card of an assistant (assistant_id in the query)",
    ],
  ]),
  // (end of agent server: A2A)
  // — agent server: generative UI (langgraph.json ui, bundled at build time: shared/build/ui-bundle.ts) —
  ...grouped("agent", [
    [
      "POST",
      "/agents/{deployment_id}/ui/{name}",
      "agent/ui/component",
      "Generative UI: the HTML (stylesheet and script tags) that loads a graph's UI components",
    ],
    // Browsers load these from <script src> and <link href>: no API key can go with them.
    [
      "GET",
      "/agents/{deployment_id}/ui/{name}/{file}",
      "agent/ui/asset",
      "Generative UI: a bundled file of a graph's UI components (JavaScript or CSS)",
      PUBLIC,
    ],
  ]),
  // (end of agent server: generative UI)
  // — agent server: custom routes (langgraph.json http.app, shared/agent/runtime/custom-routes.ts) —
  ...grouped("agent", [
    [
      "ANY",
      "/agents/{deployment_id}/{proxy+}",
      "agent/custom/route",
      "Custom routes of the deployment (langgraph.json http.app); any other path answers 404",
    ],
  ]),
  // (end of agent server: custom routes)
];

/**
 * Entry points that are neither a route's handler nor a task: in AWS, the router in front of deployments'
 * runtimes, and a deployment's runtime itself (the platform's runtime layer).
 */
export const AGENT_ENTRY_POINTS = { router: "agent/router", runtime: "agent/runtime" } as const;

/**
 * Routes a deployment's own runtime serves (the authenticated agent-server routes: they read the deployment's
 * data or run its code). The platform's router checks the API key and forwards them; it never handles them.
 */
export const servedByRuntime = (r: Route): boolean => r.group === "agent" && r.auth && !r.platform;

export interface MountedRoute extends Route {
  /** The concrete path this copy answers on (the route's path, or its /api-host twin). */
  mountPath: string;
  routeKey: string;
}

/** Every path a route answers on: control-plane routes are mounted twice. */
export function mountedRoutes(list: Route[] = routes): MountedRoute[] {
  return list.flatMap((r) => {
    const paths = r.group === "control" ? [r.path, SELF_HOSTED_PREFIX + r.path] : [r.path];
    return paths.map((mountPath) => ({ ...r, mountPath, routeKey: `${r.method} ${mountPath}` }));
  });
}

let byKey: Map<string, Route> | undefined;
/** The route of a route key; `POST /x/{proxy+}` (what API Gateway names a request to an ANY route) is `ANY /x/{proxy+}`. */
export function routeForKey(routeKey: string): Route | undefined {
  byKey ??= new Map(mountedRoutes().map((m) => [m.routeKey, m]));
  return byKey.get(routeKey) ?? byKey.get(routeKey.replace(/^[A-Z]+ /, "ANY "));
}

/** Lambda-safe function name stem for a route: one function per route. */
export function routeId(r: Route): string {
  return r.handler
    .split(/[/-]/)
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
    .join("");
}
