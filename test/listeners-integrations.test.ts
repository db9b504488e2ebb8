import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace } from "../harness/export.ts";
import { type FakeServer, fakeServer } from "../harness/fake-http.ts";
import { getItem } from "../shared/aws/ddb.ts";
import { getIntegration, integrationToken } from "../shared/control/integrations.ts";
import { getListener } from "../shared/control/listeners.ts";
import { call } from "./helpers/cloud.ts";

// Listeners (v2) and source-code integrations (v1) over HTTP against the local cloud.
const LISTENERS = "/v2/listeners";
const INTEGRATIONS = "/v1/integrations/github";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let other: Awaited<ReturnType<typeof newWorkspace>>;
beforeAll(async () => {
  [ws, other] = await Promise.all([newWorkspace(), newWorkspace()]);
});

const listener = (computeId: string, over: Record<string, unknown> = {}) =>
  call("POST", LISTENERS, {
    headers: ws.headers,
    body: {
      compute_type: "k8s",
      compute_id: computeId,
      compute_config: { k8s_namespaces: ["agents"] },
      ...over,
    },
  });

describe("listeners", () => {
  it("POST creates a listener (201) with the Listener fields", async () => {
    const r = await listener("cluster-a", { version: "0.1.2" });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: ws.tenant,
      compute_type: "k8s",
      compute_id: "cluster-a",
      compute_config: { k8s_namespaces: ["agents"] },
      version: "0.1.2",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await call("GET", `${LISTENERS}/${r.json.id}`, { headers: ws.headers });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
    expect(await getListener(ws.tenant, r.json.id)).toEqual(r.json);
  });

  it("compute_type and compute_config default; version is null when not given", async () => {
    const r = await call("POST", LISTENERS, { headers: ws.headers, body: { compute_id: "defaults" } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      compute_type: "k8s",
      compute_config: { k8s_namespaces: null },
      version: null,
    });
  });

  it("a second listener for the same compute_id is a 409; after a delete the compute_id is free", async () => {
    const first = await listener("dup");
    expect((await listener("dup")).status).toBe(409);
    const del = await call("DELETE", `${LISTENERS}/${first.json.id}`, { headers: ws.headers });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await call("GET", `${LISTENERS}/${first.json.id}`, { headers: ws.headers })).status).toBe(404);
    expect((await listener("dup")).status).toBe(201);
  });

  it("PATCH changes version and compute_config, not compute_id", async () => {
    const r = await listener("patch-me");
    const p = await call("PATCH", `${LISTENERS}/${r.json.id}`, {
      headers: ws.headers,
      body: { version: "2.0.0", compute_config: { k8s_namespaces: ["a", "b", "a"] } },
    });
    expect(p.status, p.text).toBe(200);
    expect(p.json).toMatchObject({
      id: r.json.id,
      version: "2.0.0",
      compute_config: { k8s_namespaces: ["a", "b"] },
    });
    expect(p.json.updated_at >= r.json.updated_at).toBe(true);
    expect(p.json.created_at).toBe(r.json.created_at);
    const same = await call("PATCH", `${LISTENERS}/${r.json.id}`, {
      headers: ws.headers,
      body: { compute_id: "patch-me" },
    });
    expect(same.status).toBe(200);
    const moved = await call("PATCH", `${LISTENERS}/${r.json.id}`, {
      headers: ws.headers,
      body: { compute_id: "other" },
    });
    expect(moved.status).toBe(422);
    expect(moved.json.detail[0].loc).toEqual(["body", "compute_id"]);
  });

  it("lists newest first in pages of `limit`; `offset` in the answer is the next page's", async () => {
    const mine = await newWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call("POST", LISTENERS, { headers: mine.headers, body: { compute_id: `c${i}` } });
      ids.push(r.json.id);
    }
    const p1 = await call("GET", `${LISTENERS}?limit=2`, { headers: mine.headers });
    expect(p1.status).toBe(200);
    expect(p1.json.resources.map((l: any) => l.id)).toEqual([ids[4], ids[3]]);
    expect(p1.json.offset).toBe(2);
    const p2 = await call("GET", `${LISTENERS}?limit=2&offset=${p1.json.offset}`, { headers: mine.headers });
    expect(p2.json.resources.map((l: any) => l.id)).toEqual([ids[2], ids[1]]);
    const p3 = await call("GET", `${LISTENERS}?limit=2&offset=${p2.json.offset}`, { headers: mine.headers });
    expect(p3.json).toEqual({ resources: [expect.objectContaining({ id: ids[0] })], offset: 5 });
    const end = await call("GET", `${LISTENERS}?offset=5`, { headers: mine.headers });
    expect(end.json).toEqual({ resources: [], offset: 5 });
    const all = await call("GET", LISTENERS, { headers: mine.headers });
    expect(all.json.resources).toHaveLength(5);
  });

  it("bad bodies and queries are 422s with their location", async () => {
    const cases: [string, unknown, (string | number)[]][] = [
      ["POST", { compute_type: "ecs", compute_id: "x" }, ["body", "compute_type"]],
      ["POST", { compute_config: {} }, ["body", "compute_id"]],
      [
        "POST",
        { compute_id: "x", compute_config: { k8s_namespaces: ["Not_A_Label"] } },
        ["body", "compute_config", "k8s_namespaces", 0],
      ],
      [
        "POST",
        { compute_id: "x", compute_config: { k8s_namespaces: "agents" } },
        ["body", "compute_config", "k8s_namespaces"],
      ],
    ];
    for (const [method, body, loc] of cases) {
      const r = await call(method, LISTENERS, { headers: ws.headers, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0].loc).toEqual(loc);
    }
    for (const q of ["limit=0", "limit=101", "limit=x", "offset=-1"]) {
      const r = await call("GET", `${LISTENERS}?${q}`, { headers: ws.headers });
      expect(r.status, q).toBe(422);
    }
    expect((await call("GET", `${LISTENERS}/not-a-uuid`, { headers: ws.headers })).status).toBe(422);
  });

  it("unknown ids and another workspace's listeners are 404s", async () => {
    const r = await listener("private");
    for (const [method, id] of [
      ["GET", UNKNOWN],
      ["PATCH", UNKNOWN],
      ["DELETE", UNKNOWN],
    ])
      expect(
        (
          await call(method, `${LISTENERS}/${id}`, {
            headers: ws.headers,
            body: method === "PATCH" ? {} : undefined,
          })
        ).status,
      ).toBe(404);
    for (const method of ["GET", "PATCH", "DELETE"])
      expect(
        (
          await call(method, `${LISTENERS}/${r.json.id}`, {
            headers: other.headers,
            body: method === "PATCH" ? { version: "x" } : undefined,
          })
        ).status,
      ).toBe(404);
    expect((await call("GET", LISTENERS, { headers: other.headers })).json.resources).toEqual([]);
    expect(await getListener(other.tenant, r.json.id)).toBeUndefined();
    expect(await getListener(ws.tenant, "../../etc")).toBeUndefined();
  });

  it("answers under the self-hosted /api-host prefix", async () => {
    const r = await call("POST", `/api-host${LISTENERS}`, {
      headers: ws.headers,
      body: { compute_id: "via-prefix" },
    });
    expect(r.status).toBe(201);
    expect((await call("GET", `/api-host${LISTENERS}/${r.json.id}`, { headers: ws.headers })).json).toEqual(
      r.json,
    );
  });
});

// — integrations —

const TOKEN = "ghs_fake_installation_token_0123456789";
let api: FakeServer;
const repos = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: 1000 + from + i,
    name: `repo-${from + i}`,
    owner: { login: "acme" },
    html_url: `https://github.com/acme/repo-${from + i}`,
    default_branch: "main",
  }));
beforeAll(async () => {
  api = await fakeServer((req) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return { status: 401, body: { message: "Bad credentials" } };
    if (req.path === "/fail/installation/repositories") return { status: 500, body: { message: "boom" } };
    if (req.path === "/html/installation/repositories")
      return { status: 200, body: "<html></html>", type: "text/html" };
    if (req.path !== "/installation/repositories") return { status: 404, body: {} };
    // 130 repositories over pages of per_page.
    const per = Number(req.query.get("per_page"));
    const page = Number(req.query.get("page"));
    const from = (page - 1) * per;
    return {
      status: 200,
      body: { total_count: 130, repositories: repos(Math.max(0, Math.min(per, 130 - from)), from) },
    };
  });
});
afterAll(() => api?.close());

const integration = (body: Record<string, unknown>, headers = ws.headers) =>
  call("POST", INTEGRATIONS, {
    headers,
    body: { name: "acme", access_token: TOKEN, api_url: api.url, ...body },
  });

describe("source-code integrations", () => {
  it("POST registers an integration: the token is sealed, never returned", async () => {
    const r = await integration({ installation_id: 42 });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      installation_id: 42,
      name: "acme",
      api_url: api.url,
      has_webhook_secret: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(r.text).not.toContain(TOKEN);
    const item = await getItem("main", { PK: `T#${ws.tenant}#INTEGRATION`, SK: r.json.id });
    expect(item?.token_sealed).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(TOKEN);
    expect(await integrationToken(ws.tenant, r.json.id)).toBe(TOKEN);
    expect(await getIntegration(ws.tenant, r.json.id)).toEqual(r.json);
    expect(await integrationToken(other.tenant, r.json.id)).toBeUndefined();
  });

  it("GET /install lists id, installation_id and name only; installation_id is generated when not given", async () => {
    const mine = await newWorkspace();
    const r = await integration({ name: "generated" }, mine.headers);
    expect(Number.isSafeInteger(r.json.installation_id) && r.json.installation_id > 0).toBe(true);
    const list = await call("GET", `${INTEGRATIONS}/install`, { headers: mine.headers });
    expect(list.status).toBe(200);
    expect(list.json).toEqual([
      { id: r.json.id, installation_id: r.json.installation_id, name: "generated" },
    ]);
    expect(list.text).not.toContain(TOKEN);
  });

  it("lists the repositories the token reads, through the API's pages, with the listing's fields", async () => {
    const r = await integration({});
    const before = api.seen.length;
    const got = await call("GET", `${INTEGRATIONS}/${r.json.id}/repos`, { headers: ws.headers });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toHaveLength(130);
    expect(got.json[0]).toEqual({
      host_integration_id: r.json.id,
      id: 1000,
      name: "repo-0",
      owner: "acme",
      url: "https://github.com/acme/repo-0",
      default_branch: "main",
    });
    expect(got.json[129].name).toBe("repo-129");
    const calls = api.seen.slice(before);
    expect(calls.map((c) => c.query.get("page"))).toEqual(["1", "2"]);
    expect(calls.every((c) => c.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("an upstream failure is a 502 that says what went wrong", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ api_url: `${api.url}/fail` }, /HTTP 500/],
      [{ api_url: `${api.url}/html` }, /something other than a repository list/],
      [{ access_token: "wrong" }, /refused its access token \(HTTP 401\)/],
      [{ api_url: "http://127.0.0.1:9" }, /Could not reach/],
    ];
    for (const [over, message] of cases) {
      const r = await integration(over);
      expect(r.status, r.text).toBe(200);
      const got = await call("GET", `${INTEGRATIONS}/${r.json.id}/repos`, { headers: ws.headers });
      expect(got.status, JSON.stringify(over)).toBe(502);
      expect(got.json.detail).toMatch(message);
      expect(got.text).not.toContain(TOKEN);
    }
  });

  it("bad bodies are 422s", async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ access_token: undefined }, ["body", "access_token"]],
      [{ name: "" }, ["body", "name"]],
      [{ api_url: "ftp://example.com" }, ["body", "api_url"]],
      [{ api_url: "https://user:pw@example.com" }, ["body", "api_url"]],
      [{ installation_id: -1 }, ["body", "installation_id"]],
      [{ installation_id: "12" }, ["body", "installation_id"]],
    ];
    for (const [over, loc] of cases) {
      const r = await integration(over);
      expect(r.status, JSON.stringify(over)).toBe(422);
      expect(r.json.detail[0].loc).toEqual(loc);
    }
  });

  it("DELETE answers 204; unknown and other workspaces' integrations are 404s", async () => {
    const r = await integration({});
    for (const path of [`${INTEGRATIONS}/${r.json.id}/repos`, `${INTEGRATIONS}/${r.json.id}`])
      expect(
        (await call(path.endsWith("repos") ? "GET" : "DELETE", path, { headers: other.headers })).status,
      ).toBe(404);
    expect((await call("DELETE", `${INTEGRATIONS}/${UNKNOWN}`, { headers: ws.headers })).status).toBe(404);
    expect((await call("GET", `${INTEGRATIONS}/not-a-uuid/repos`, { headers: ws.headers })).status).toBe(422);
    const del = await call("DELETE", `${INTEGRATIONS}/${r.json.id}`, { headers: ws.headers });
    expect(del.status).toBe(204);
    expect((await call("GET", `${INTEGRATIONS}/${r.json.id}/repos`, { headers: ws.headers })).status).toBe(
      404,
    );
    expect(await getIntegration(ws.tenant, r.json.id)).toBeUndefined();
  });
});
