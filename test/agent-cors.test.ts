import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { auth, call } from "./helpers/cloud.ts";

// Issue 15, item 5: browser apps call agent servers. CORS as the reference server answers it (hono's cors():
// any origin, content-location and x-pagination-total exposed), or as a deployment's langgraph.json http.cors
// says; preflights are answered by the gateway without an API key, and errors carry the headers too.
const APP = "https://app.example";
const OTHER = "https://other.example";
const preflightOf = (origin: string) => ({
  Origin: origin,
  "Access-Control-Request-Method": "POST",
  "Access-Control-Request-Headers": "x-api-key,content-type",
});

const open = gitRepo(graphRepoFiles(["a"]));
const restricted = gitRepo({
  ...graphRepoFiles(["a"]),
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    http: {
      cors: { allow_origins: [APP], allow_origin_regex: "https://[a-z]+\\.app\\.example", max_age: 600 },
    },
  }),
});
let openId: string;
let restrictedId: string;

beforeAll(async () => {
  [openId, restrictedId] = await Promise.all(
    [open, restricted].map(async (r, i) => (await deployRepo(r.dir, `cors-${i}`, call, auth)).deploymentId),
  );
}, 240_000);

afterAll(() => {
  open.remove();
  restricted.remove();
});

describe("an agent server without http.cors: the reference defaults", () => {
  it("answers a preflight 204 without an API key", async () => {
    const r = await call("OPTIONS", `/agents/${openId}/threads`, { headers: preflightOf(APP) });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(Object.fromEntries(r.headers)).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH",
      "access-control-allow-headers": "x-api-key,content-type",
      "access-control-expose-headers": "content-location,x-pagination-total,retry-after",
      vary: "Access-Control-Request-Headers",
    });
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    // Any path of the agent server, with parameters.
    const deep = await call("OPTIONS", `/agents/${openId}/threads/${crypto.randomUUID()}/runs/stream`, {
      headers: preflightOf(APP),
    });
    expect(deep.status).toBe(204);
  });

  it("an actual request from a browser gets Allow-Origin and the exposed headers", async () => {
    const r = await call("POST", `/agents/${openId}/threads`, {
      headers: { ...auth, Origin: APP },
      body: {},
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-expose-headers")?.split(",")).toEqual(
      expect.arrayContaining(["content-location", "x-pagination-total", "retry-after"]),
    );
    // A client that is no browser (no Origin) gets no CORS headers.
    const plain = await call("POST", `/agents/${openId}/threads`, { headers: auth, body: {} });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("errors carry the headers: 401 without a key, 404 for an unknown deployment, 422 from the runtime", async () => {
    const unauthorized = await call("POST", `/agents/${openId}/threads`, {
      headers: { Origin: APP },
      body: {},
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe("*");
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("content-location");
    const missing = await call("GET", `/agents/${crypto.randomUUID()}/threads/${crypto.randomUUID()}`, {
      headers: { ...auth, Origin: APP },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("*");
    const invalid = await call("POST", `/agents/${openId}/threads/search`, {
      headers: { ...auth, Origin: APP },
      body: { limit: "many" },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("the platform's own API answers preflights with the same defaults", async () => {
    const pre = await call("OPTIONS", "/v2/deployments", { headers: preflightOf(APP) });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    const list = await call("GET", "/v2/deployments", { headers: { ...auth, Origin: APP } });
    expect(list.status).toBe(200);
    expect(list.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("an agent server whose langgraph.json sets http.cors", () => {
  it("allows the listed origin: echoed, with Vary: Origin and the max age", async () => {
    const r = await call("OPTIONS", `/agents/${restrictedId}/threads`, { headers: preflightOf(APP) });
    expect(r.status).toBe(204);
    expect(Object.fromEntries(r.headers)).toMatchObject({
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH",
      "access-control-allow-headers": "x-api-key,content-type",
      "access-control-max-age": "600",
      vary: "Origin, Access-Control-Request-Headers",
    });
    const created = await call("POST", `/agents/${restrictedId}/threads`, {
      headers: { ...auth, Origin: APP },
      body: {},
    });
    expect(created.status).toBe(200);
    expect(created.headers.get("access-control-allow-origin")).toBe(APP);
    expect(created.headers.get("access-control-expose-headers")).toContain("content-location");
  });

  it("does not allow another origin (preflight, request and error alike)", async () => {
    const pre = await call("OPTIONS", `/agents/${restrictedId}/threads`, { headers: preflightOf(OTHER) });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const r = await call("POST", `/agents/${restrictedId}/threads`, {
      headers: { ...auth, Origin: OTHER },
      body: {},
    });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const unauthorized = await call("POST", `/agents/${restrictedId}/threads`, {
      headers: { Origin: APP },
      body: {},
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(APP);
  });
});

describe("a hostile Origin", () => {
  it("one longer than the cap is not allowed, even where the regex would match it", async () => {
    const long = `https://${"a".repeat(5000)}.app.example`;
    const pre = await call("OPTIONS", `/agents/${restrictedId}/threads`, { headers: preflightOf(long) });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const short = await call("OPTIONS", `/agents/${restrictedId}/threads`, {
      headers: preflightOf("https://preview.app.example"),
    });
    expect(short.headers.get("access-control-allow-origin")).toBe("https://preview.app.example");
  });
});

describe("a bad http.cors", () => {
  it("fails the build, the revision's error and log saying which key and why", async () => {
    const bad = gitRepo({
      ...graphRepoFiles(["a"]),
      "langgraph.json": JSON.stringify({
        graphs: { agent: "./src/graph.mjs:graph" },
        http: { cors: { allow_origins: APP } },
      }),
    });
    try {
      await expect(deployRepo(bad.dir, "cors-bad", call, auth)).rejects.toThrow(
        /BUILD_FAILED: graph config langgraph.json: http\.cors\.allow_origins: must be a list of origins/,
      );
      const list = await call("GET", "/v2/deployments?name_contains=cors-bad", { headers: auth });
      const d = list.json.resources.find((x: { name: string }) => x.name.startsWith("cors-bad"));
      const logs = await call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs`, {
        headers: auth,
      });
      expect(logs.json.build_log).toContain("http.cors.allow_origins: must be a list of origins");
    } finally {
      bad.remove();
    }
  }, 120_000);

  it("an allow_origin_regex that can backtrack exponentially is left out with a build-log line; the rest serves", async () => {
    const bad = gitRepo({
      ...graphRepoFiles(["a"]),
      "langgraph.json": JSON.stringify({
        graphs: { agent: "./src/graph.mjs:graph" },
        http: { cors: { allow_origins: [APP], allow_origin_regex: "https://(a+)+$" } },
      }),
    });
    try {
      const { deploymentId, revisionId } = await deployRepo(bad.dir, "cors-redos", call, auth);
      const logs = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs`, {
        headers: auth,
      });
      expect(logs.json.build_log).toMatch(
        /Not served here \(the rest of the config is\): http\.cors\.allow_origin_regex: the regex may not repeat a group that holds a quantifier/,
      );
      // The origins listed are allowed; an origin only the regex would match is not.
      const listed = await call("OPTIONS", `/agents/${deploymentId}/threads`, { headers: preflightOf(APP) });
      expect(listed.headers.get("access-control-allow-origin")).toBe(APP);
      const byRegex = await call("OPTIONS", `/agents/${deploymentId}/threads`, {
        headers: preflightOf("https://aaaa"),
      });
      expect(byRegex.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      bad.remove();
    }
  }, 120_000);
});
