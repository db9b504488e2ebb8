import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient } from "../harness/agents.ts";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 6: langgraph.json `http.app` (a Hono app whose routes take precedence over the built-in ones,
// mounted at the agent server's root), `http.disable_*` (a disabled group answers 404) and `ui` (components
// bundled at build time, loaded the way the SDK's LoadExternalComponent loads them).
const APP = `import { Hono } from "hono";
import { streamSSE } from "hono/streaming";

export const app = new Hono();
// The reference's test middleware: a header becomes a config.configurable key of every run created. It changes
// the body Hono parsed; Hono before 4.13 kept that object for later reads (bodyCache.json), which this keeps too.
app.use(async (c, next) => {
  const value = c.req.header("x-configurable-header");
  const runsRoute = ["/runs", "/runs/wait", "/runs/stream"].some((r) => c.req.path.endsWith(r));
  if (c.req.method === "POST" && runsRoute && value != null) {
    const body = await c.req.json();
    body.config ??= {};
    body.config.configurable ??= {};
    body.config.configurable["x-configurable-header"] ??= value;
    c.req.bodyCache = { json: Promise.resolve(body) };
  }
  await next();
});
// The reference's own test middleware as it is written: it changes, in place, the object c.req.json() gave it
// (Hono from 4.13 parses the body anew on each read; the rewritten body must still be what the run sees).
app.use(async (c, next) => {
  const value = c.req.header("x-rewrite-header");
  const runsRoute = ["/runs", "/runs/wait", "/runs/stream"].some((r) => c.req.path.endsWith(r));
  if (c.req.method === "POST" && runsRoute && value != null) {
    const body = await c.req.json();
    body.config ??= {};
    body.config.configurable ??= {};
    body.config.configurable["x-rewrite-header"] ??= value;
  }
  await next();
});
app.get("/hello", (c) => c.json({ hello: "world", path: c.req.path, q: c.req.query("q") ?? null }));
app.post("/echo", async (c) => c.json({ got: await c.req.json(), method: c.req.method }, 201));
// Shadows the built-in GET /info, as the reference's custom routes may.
app.get("/info", (c) => c.json({ custom: true }));
app.get("/ticks", (c) =>
  streamSSE(c, async (s) => {
    for (let i = 0; i < 3; i++) {
      await s.writeSSE({ event: "tick", data: String(i) });
      await s.sleep(400);
    }
  }),
);
`;
const UI = `import "./ui.css";

const Weather = (props) => <div className="weather">Weather in {props.city}</div>;
export default { weather: Weather };
`;

const repo = gitRepo({
  ...graphRepoFiles(["a"]),
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph", configured: "./src/configured.mjs:graph" },
    http: { app: "./src/app.mjs:app", disable_store: true },
    // A name that is no identifier, as the reference takes it (issue 27): its global is __LGUI_agent_alias.
    ui: { agent: "./src/ui.jsx", "agent-alias": "./src/ui.jsx" },
  }),
  "src/app.mjs": APP,
  // What the run sees of its config: the value the middleware put in config.configurable.
  "src/configured.mjs": `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(State)
  .addNode("read", (s, config) => ({ text: \`\${s.text}: \${config.configurable?.["x-rewrite-header"] ?? "none"}\` }))
  .addEdge(START, "read")
  .addEdge("read", END)
  .compile();
`,
  "src/ui.jsx": UI,
  "src/ui.css": ".weather { color: rebeccapurple; }\n",
});
const broken = gitRepo({
  ...graphRepoFiles(["a"]),
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    ui: { broken: "./src/ui.jsx" },
  }),
  "src/ui.jsx": "export default { x: () => <div>unclosed </span> };\n",
});
let id: string;
let client: Client;
const url = (path: string) => `${base}/agents/${id}${path}`;

beforeAll(async () => {
  ({ deploymentId: id } = await deployRepo(repo.dir, "http-app", call, auth));
  client = agentClient(facts, id);
}, 240_000);

afterAll(() => {
  repo.remove();
  broken.remove();
});

describe("http.app: the deployment's custom routes", () => {
  it("a custom GET route answers, seeing the path without /agents/{deployment_id}", async () => {
    const r = await fetch(url("/hello?q=1"), { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ hello: "world", path: "/hello", q: "1" });
  });

  it("a custom POST route gets the JSON body and sets the status", async () => {
    const r = await fetch(url("/echo"), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ a: [1, 2] }),
    });
    expect(r.status).toBe(201);
    expect(await r.json()).toEqual({ got: { a: [1, 2] }, method: "POST" });
  });

  it("a custom route shadows the built-in route of the same method and path", async () => {
    const r = await fetch(url("/info"), { headers: auth });
    expect(await r.json()).toEqual({ custom: true });
  });

  it("a streamed answer streams: the first event arrives before the app has finished", async () => {
    const started = Date.now();
    const r = await fetch(url("/ticks"), { headers: auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = r.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const firstAt = Date.now() - started;
    expect(first).toContain("event: tick");
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(first + rest).toMatch(/data: 0[\s\S]*data: 1[\s\S]*data: 2/);
    expect(Date.now() - started - firstAt).toBeGreaterThanOrEqual(600);
  });

  it("needs the API key like every agent-server route", async () => {
    expect((await fetch(url("/hello"))).status).toBe(401);
  });

  it("a path neither the app nor the server has answers 404 Not Found, any method", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const r = await fetch(url("/no/such/path"), { method, headers: auth });
      expect(r.status, method).toBe(404);
      expect(await r.json()).toEqual({ detail: "Not Found" });
    }
  });

  it("a CORS preflight of a custom path is still answered by the platform", async () => {
    const r = await fetch(url("/hello"), {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET" },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("the built-in routes still serve the SDK", async () => {
    const [assistant] = await client.assistants.search({ graphId: "agent" });
    expect(assistant?.graph_id).toBe("agent");
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "agent", { input: { text: "x" } });
    expect(values).toEqual({ text: "x>a" });
  });

  it("a middleware that rewrites a run's body has the rewritten body reach the built-in route", async () => {
    const thread = await client.threads.create();
    const r = await fetch(url(`/threads/${thread.thread_id}/runs`), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "x-configurable-header": "from-header" },
      body: JSON.stringify({ assistant_id: "agent", input: { text: "y" } }),
    });
    expect(r.status).toBe(200);
    const run = (await r.json()) as { run_id: string };
    const stored = await client.runs.get(thread.thread_id, run.run_id);
    expect(
      (stored as unknown as { kwargs: { config: { configurable: object } } }).kwargs.config.configurable,
    ).toMatchObject({
      "x-configurable-header": "from-header",
    });
    // Without the header the body is the client's own.
    const plain = await client.runs.create(thread.thread_id, "agent", {
      input: { text: "z" },
      multitaskStrategy: "enqueue",
    });
    const again = await client.runs.get(thread.thread_id, plain.run_id);
    expect(JSON.stringify(again)).not.toContain("from-header");
  });
});

describe("http.app: a middleware that rewrites the request body before the run is created", () => {
  it("the run sees the body as the middleware changed it, through the SDK (the reference's test, as written)", async () => {
    const rewriting = new Client({
      apiUrl: `${base}/agents/${id}`,
      apiKey: facts.api_key,
      defaultHeaders: { "X-Tenant-Id": facts.tenant_id, "x-rewrite-header": "extra-client" },
    });
    const thread = await rewriting.threads.create();
    expect(await rewriting.runs.wait(thread.thread_id, "configured", { input: { text: "in" } })).toEqual({
      text: "in: extra-client",
    });
    expect(await rewriting.runs.wait(null, "configured", { input: { text: "stateless" } })).toEqual({
      text: "stateless: extra-client",
    });
    // Without the header the middleware leaves the body alone: the run sees none.
    const plain = await client.threads.create();
    expect(await client.runs.wait(plain.thread_id, "configured", { input: { text: "in" } })).toEqual({
      text: "in: none",
    });
  });
});

describe("http.disable_store: the store routes are gone", () => {
  it("answers 404 on every store route, to the SDK too", async () => {
    const put = await fetch(url("/store/items"), {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ namespace: ["a"], key: "k", value: { v: 1 } }),
    });
    expect(put.status).toBe(404);
    expect(await put.json()).toEqual({ detail: "Not Found" });
    await expect(client.store.searchItems(["a"])).rejects.toThrow(/404/);
    await expect(client.store.getItem(["a"], "k")).rejects.toThrow(/404/);
  });
});

describe("ui: generative UI components", () => {
  it("POST /ui/{name} answers the HTML LoadExternalComponent inserts; the files load without an API key", async () => {
    const html = await client["~ui"].getComponent("agent", "weather");
    const css = /<link rel="stylesheet" href="([^"]+)" \/>/.exec(html)?.[1];
    const js = /<script src="([^"]+)" onload="([^"]+)"><\/script>/.exec(html);
    expect(css).toBe(`${base}/agents/${id}/ui/agent/entrypoint.css`);
    expect(js?.[1]).toBe(`${base}/agents/${id}/ui/agent/entrypoint.js`);
    // The client fills in its shadow root's id; the script renders the named component there.
    expect(js?.[2]).toBe("__LGUI_agent.render(&#34;weather&#34;, &#34;{{shadowRootId}}&#34;)");

    const script = await fetch(js![1]!);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    const code = await script.text();
    expect(code).toContain("var __LGUI_agent");
    // React comes from the page (LoadExternalComponent's LGUI_REQUIRE), never bundled.
    expect(code).toContain('Symbol.for("LGUI_REQUIRE")');
    expect(code).toContain('"react/jsx-runtime"');
    expect(code).not.toContain("react.production");
    const sheet = await fetch(css!);
    expect(sheet.status).toBe(200);
    expect(sheet.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await sheet.text()).toContain("rebeccapurple");
  });

  it("a ui name that is no identifier keeps its route; its global has '_' where the name cannot be one", async () => {
    const html = await client["~ui"].getComponent("agent-alias", "weather");
    const js = /<script src="([^"]+)" onload="([^"]+)"><\/script>/.exec(html);
    expect(js?.[1]).toBe(`${base}/agents/${id}/ui/agent-alias/entrypoint.js`);
    expect(js?.[2]).toBe("__LGUI_agent_alias.render(&#34;weather&#34;, &#34;{{shadowRootId}}&#34;)");
    const script = await fetch(js![1]!);
    expect(script.status).toBe(200);
    expect(await script.text()).toMatch(/^var __LGUI_agent_alias = /);
  });

  it("names the UI by graph id or by an assistant of that graph; an unknown one is 404", async () => {
    const [assistant] = await client.assistants.search({ graphId: "agent" });
    const byAssistant = await fetch(url(`/ui/${assistant!.assistant_id}`), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "weather", shadowRootId: "root-1" }),
    });
    expect(byAssistant.status).toBe(200);
    expect(byAssistant.headers.get("content-type")).toMatch(/^text\/html/);
    // Its script tags are the deployment's code: opened as a document on the shared origin (the console's), it runs
    // in the same CSP sandbox as custom routes' HTML; the SDK's fetch-and-insert does not read these headers.
    expect(byAssistant.headers.get("content-security-policy")).toContain("sandbox");
    expect(byAssistant.headers.get("content-security-policy")).not.toContain("allow-same-origin");
    expect(byAssistant.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await byAssistant.text()).toContain("__LGUI_agent.render(&#34;weather&#34;, &#34;root-1&#34;)");
    const unknown = await fetch(url("/ui/nobody"), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "weather" }),
    });
    expect(unknown.status).toBe(404);
    expect((await fetch(url("/ui/agent/nothing.js"))).status).toBe(404);
  });

  it("the routes are in the agent server's OpenAPI document", async () => {
    const doc = (await (await fetch(url("/openapi.json"))).json()) as { paths: Record<string, object> };
    expect(Object.keys(doc.paths["/ui/{name}"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/ui/{name}/{file}"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/{proxy}"] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "patch",
      "post",
      "put",
    ]);
  });

  it("a component that does not bundle fails the build, naming the component and esbuild's error", async () => {
    await expect(deployRepo(broken.dir, "ui-broken", call, auth)).rejects.toThrow(
      /BUILD_FAILED[\s\S]*ui component "broken"[\s\S]*ui\.jsx:1:\d+: Unexpected closing "span" tag/,
    );
  }, 180_000);
});
