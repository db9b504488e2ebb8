import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpEvent } from "../../http/event.ts";
import { RuntimeArtifact } from "../artifact/artifact.ts";
import { customRouteAnswer, disableFlagOf } from "./custom-routes.ts";

// langgraph.json http in the runtime: the app's routes first, the disabled groups 404, the rest to the built-ins.
const hono = pathToFileURL(createRequire(import.meta.url).resolve("hono")).href;
const APP = `import { Hono } from ${JSON.stringify(hono)};
export const app = new Hono();
app.use(async (c, next) => { await next(); });
// The reference's test middleware: it changes, in place, the object c.req.json() gave it.
app.use(async (c, next) => {
  const value = c.req.header("x-configurable-header");
  if (c.req.method === "POST" && c.req.path.endsWith("/runs/wait") && value != null) {
    const body = await c.req.json();
    body.config ??= {};
    body.config.configurable ??= {};
    body.config.configurable["x-configurable-header"] ??= value;
  }
  if (c.req.header("x-read-only") != null) await c.req.json();
  if (c.req.header("x-read-twice") != null) {
    await c.req.json();
    (await c.req.json()).second = true;
  }
  await next();
});
app.get("/hello/:who", (c) => c.json({ who: c.req.param("who"), path: c.req.path, q: c.req.query("q") }));
app.post("/threads", async (c) => c.text("mine: " + (await c.req.text())));
app.get("/bytes", () => new Response(new Uint8Array([0, 255, 1]), { headers: { "content-type": "application/octet-stream" } }));
app.get("/sse", () => new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("data: 1\\n\\n")); c.close(); } }), { headers: { "content-type": "text/event-stream" } }));
`;

const event = (
  method: string,
  path: string,
  body?: string,
  query = "",
  headers: Record<string, string> = {},
): HttpEvent =>
  ({
    version: "2.0",
    routeKey: "$default",
    rawPath: `/agents/dep-1${path}`,
    rawQueryString: query,
    headers: { host: "example.test", "content-type": "text/plain", ...headers },
    requestContext: { http: { method, path: `/agents/dep-1${path}` } },
    body,
    isBase64Encoded: false,
  }) as unknown as HttpEvent;

let dir: string;
let artifact: RuntimeArtifact;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "custom-routes-"));
  mkdirSync(join(dir, "http"));
  writeFileSync(join(dir, "http", "app.mjs"), APP);
  writeFileSync(
    join(dir, "manifest.json"),
    JSON.stringify({
      graphs: {},
      env: {},
      http_app: { file: "http/app.mjs", export_name: "app" },
      http: { disable_store: true, disable_meta: true },
      built_at: "",
    }),
  );
  artifact = new RuntimeArtifact(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("custom routes (http.app)", () => {
  it("a route of the app answers, with the path as if the app were mounted at the root", async () => {
    const r = await customRouteAnswer(artifact, event("GET", "/hello/ann", undefined, "q=1"), {
      handler: "agent/custom/route",
    });
    expect(r?.statusCode).toBe(200);
    expect(JSON.parse(r!.body!)).toEqual({ who: "ann", path: "/hello/ann", q: "1" });
  });

  it("takes precedence over the built-in route of the same method and path", async () => {
    const r = await customRouteAnswer(artifact, event("POST", "/threads", "x"), {
      handler: "agent/threads/create",
    });
    expect(r?.body).toBe("mine: x");
  });

  it("leaves what it has no route for to the built-in routes (middleware alone is no route)", async () => {
    expect(
      await customRouteAnswer(artifact, event("GET", "/threads/t1"), { handler: "agent/threads/get" }),
    ).toBe(undefined);
    expect(
      await customRouteAnswer(artifact, event("PUT", "/hello/ann"), { handler: "agent/custom/route" }),
    ).toBe(undefined);
  });

  it("binary bodies are base64, streamed content types stream", async () => {
    const bytes = await customRouteAnswer(artifact, event("GET", "/bytes"), {
      handler: "agent/custom/route",
    });
    expect(bytes).toMatchObject({ isBase64Encoded: true, body: Buffer.from([0, 255, 1]).toString("base64") });
    const sse = await customRouteAnswer(artifact, event("GET", "/sse"), { handler: "agent/custom/route" });
    const chunks: string[] = [];
    for await (const c of sse!.stream!) chunks.push(c);
    expect(chunks.join("")).toBe("data: 1\n\n");
  });
});

describe("a middleware that rewrites the body (Hono parses it anew on each c.req.json())", () => {
  const runWait = (body: string, headers: Record<string, string>) =>
    event("POST", "/threads/t1/runs/wait", body, "", { "content-type": "application/json", ...headers });
  const BODY = JSON.stringify({ assistant_id: "agent", input: { text: "y" } });

  it("the built-in route is handed the body as the middleware changed it", async () => {
    const e = runWait(BODY, { "x-configurable-header": "extra-client" });
    expect(await customRouteAnswer(artifact, e, { handler: "agent/runs/thread-wait" })).toBe(undefined);
    expect(JSON.parse(e.body!)).toEqual({
      assistant_id: "agent",
      input: { text: "y" },
      config: { configurable: { "x-configurable-header": "extra-client" } },
    });
  });

  it("a middleware that only reads the body leaves it byte for byte as the client sent it", async () => {
    const sent = '{"assistant_id":"agent",  "input":{"text":"y"}}';
    for (const e of [runWait(sent, { "x-read-only": "1" }), runWait(sent, {})]) {
      expect(await customRouteAnswer(artifact, e, { handler: "agent/runs/thread-wait" })).toBe(undefined);
      expect(e.body).toBe(sent);
    }
  });

  it("of several reads, the one the middleware changed is the body", async () => {
    const e = runWait(BODY, { "x-read-twice": "1" });
    await customRouteAnswer(artifact, e, { handler: "agent/runs/thread-wait" });
    expect(JSON.parse(e.body!)).toEqual({ assistant_id: "agent", input: { text: "y" }, second: true });
  });
});

describe("without http.app", () => {
  it("every request goes to its built-in route (the catch-all's 404 for an unknown path)", async () => {
    const plain = mkdtempSync(join(tmpdir(), "custom-routes-plain-"));
    writeFileSync(join(plain, "manifest.json"), JSON.stringify({ graphs: {}, env: {}, built_at: "" }));
    try {
      const artifact = new RuntimeArtifact(plain);
      expect(
        await customRouteAnswer(artifact, event("GET", "/hello/ann"), { handler: "agent/custom/route" }),
      ).toBe(undefined);
      expect(
        await customRouteAnswer(artifact, event("PUT", "/store/items"), { handler: "agent/store/put-item" }),
      ).toBe(undefined);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});

describe("http.disable_* flags", () => {
  it("a disabled group answers 404 Not Found; the others are left to their routes", async () => {
    const store = await customRouteAnswer(artifact, event("PUT", "/store/items"), {
      handler: "agent/store/put-item",
    });
    expect(store).toMatchObject({ statusCode: 404, body: JSON.stringify({ detail: "Not Found" }) });
    const info = await customRouteAnswer(artifact, event("GET", "/metrics"), {
      handler: "agent/system/metrics",
    });
    expect(info?.statusCode).toBe(404);
    expect(
      await customRouteAnswer(artifact, event("GET", "/assistants/a"), { handler: "agent/assistants/get" }),
    ).toBe(undefined);
  });

  it("maps each flag to its route group (crons go with runs)", () => {
    expect(disableFlagOf("agent/crons/create")).toBe("disable_runs");
    expect(disableFlagOf("agent/a2a/rpc")).toBe("disable_a2a");
    expect(disableFlagOf("agent/mcp/post")).toBe("disable_mcp");
    expect(disableFlagOf("agent/ui/component")).toBe("disable_ui");
    expect(disableFlagOf("agent/custom/route")).toBe(undefined);
    expect(disableFlagOf("control/deployments/create")).toBe(undefined);
  });
});
