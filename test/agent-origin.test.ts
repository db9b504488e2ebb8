import { Client, overrideFetchImplementation } from "@langchain/langgraph-sdk";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRepoFiles, deployRepo, gitRepo } from "../harness/repos.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 25, break-out 3: a deployment's custom route served HTML/JS on the console's origin (/agents/…), and a
// service worker registered from there with scope "/" (its script's answer said Service-Worker-Allowed: /) caught
// the next console sign-in. Now each deployment also has an origin of its own (`<deployment>.localhost`: its agent
// server at the root), and on the shared origin its documents are sandboxed (an opaque origin: no storage, cookies
// or service workers of the console) and no answer may widen a service worker's scope.
const APP = `import { Hono } from "hono";
export const app = new Hono();
app.get("/page", (c) => c.html("<script>navigator.serviceWorker.register('./sw.js', { scope: '/' })</script>"));
app.get("/sw.js", (c) => c.body("self.addEventListener('fetch', () => {})", 200, {
  "content-type": "text/javascript",
  "service-worker-allowed": "/",
}));
app.get("/custom/route", (c) => c.json({ custom: true, path: c.req.path }));
`;
const repo = gitRepo(appRepoFiles({ app: APP }));
let id: string;
const port = new URL(base).port;
const own = () => `http://${id}.localhost:${port}`;
// Browsers resolve any *.localhost to loopback; Node's resolver here does not, so this test's clients do it.
const loopback = new Agent({
  connect: {
    lookup: (
      _host: string,
      _opts: unknown,
      done: (e: null, a: { address: string; family: number }[]) => void,
    ) => done(null, [{ address: "127.0.0.1", family: 4 }]),
  } as never,
});
const localhostFetch = ((url: string, init?: object) =>
  undiciFetch(url, { ...init, dispatcher: loopback } as never)) as unknown as typeof fetch;
/** A request to the deployment's own origin. */
const atOwn = (path: string, init: { headers?: Record<string, string> } = {}) =>
  localhostFetch(`${own()}${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });

beforeAll(async () => {
  ({ deploymentId: id } = await deployRepo(repo.dir, "origin", call, auth));
}, 240_000);
afterAll(() => repo.remove());

describe("a deployment's content never acts with the console's origin", () => {
  it("on the shared origin, its HTML is sandboxed and its scripts cannot widen a service worker's scope", async () => {
    const page = await fetch(`${base}/agents/${id}/page`, { headers: auth });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/(^|, )sandbox( |$|,)/);
    const sw = await fetch(`${base}/agents/${id}/sw.js`, { headers: auth });
    expect(sw.status).toBe(200);
    expect(sw.headers.get("service-worker-allowed")).toBeNull();
  });

  it("at its own origin (<deployment>.localhost) it serves at the root: custom routes, /info, /docs, the SDK", async () => {
    const custom = await atOwn("/custom/route");
    expect(await custom.json()).toEqual({ custom: true, path: "/custom/route" });
    expect((await atOwn("/info")).status).toBe(200);
    expect((await atOwn("/docs")).status).toBe(200);
    const sw = await atOwn("/sw.js");
    expect(sw.headers.get("service-worker-allowed")).toBeNull();
    // Its HTML is sandboxed there too, unless langgraph.json says http.html_sandbox: false.
    expect((await atOwn("/page")).headers.get("content-security-policy")).toMatch(/sandbox/);
    overrideFetchImplementation(localhostFetch);
    const client = new Client({ apiUrl: own(), apiKey: facts.api_key, defaultHeaders: auth });
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, "agent", { input: { text: "x" } })).toEqual({
      text: "x>a",
    });
  });

  it("its own origin serves nothing of the platform: no console, no platform API", async () => {
    const root = await atOwn("/", { headers: { accept: "text/html" } });
    expect(await root.text()).not.toMatch(/<html/i);
    const api = await atOwn("/v2/deployments");
    expect(api.status).toBe(404);
    const climbing = await atOwn("/%2e%2e/%2e%2e/v2/deployments");
    expect(climbing.status).toBe(404);
  });
});
