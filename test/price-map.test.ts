import { describe, expect, it } from "vitest";
import { ensureTenant, newApiKey, storeApiKey } from "../shared/auth/api-keys.ts";
import { DEFAULT_PRICE_MAP } from "../shared/llm/default-prices.ts";
import { priceEntriesFor } from "../shared/llm/price-store.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

const MAP = "/api/v1/model-price-map";
const entry = (over: Record<string, unknown> = {}) => ({
  name: `acme-${crypto.randomUUID().slice(0, 8)}`,
  match_pattern: "^acme-1$",
  provider: "acme",
  prompt_cost: 0.000002,
  completion_cost: 0.000003,
  prompt_cost_details: { cache_read: 0.000001 },
  completion_cost_details: null,
  start_time: null,
  ...over,
});

async function freshTenant() {
  const tenant = crypto.randomUUID();
  const key = newApiKey();
  await ensureTenant(tenant, "prices");
  await storeApiKey(key, [tenant]);
  return { tenant, headers: { "X-Api-Key": key } };
}

describe("model price map (/api/v1/model-price-map)", () => {
  it("the defaults are listed on a workspace's first read, once", async () => {
    const { headers, tenant } = await freshTenant();
    const [a, b] = await Promise.all([call("GET", MAP, { headers }), call("GET", MAP, { headers })]);
    expect(a.status).toBe(200);
    expect(a.json).toHaveLength(DEFAULT_PRICE_MAP.length);
    expect(b.json).toHaveLength(DEFAULT_PRICE_MAP.length);
    const gpt4o = a.json.find((e: { id: string }) => e.id === "default-openai-gpt-4o");
    expect(gpt4o).toMatchObject({
      name: "gpt-4o",
      provider: null,
      prompt_cost: 2.5e-6,
      completion_cost: 10e-6,
      prompt_cost_details: { cache_read: 1.25e-6 },
      start_time: null,
      tenant_id: tenant,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it("POST creates an entry with a new id; decimal strings and match_path are accepted", async () => {
    const r = await call("POST", MAP, {
      headers: auth,
      body: entry({ prompt_cost: "0.000002", match_path: ["model"], start_time: "2024-01-01T00:00:00Z" }),
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      match_pattern: "^acme-1$",
      provider: "acme",
      prompt_cost: 0.000002,
      completion_cost: 0.000003,
      prompt_cost_details: { cache_read: 0.000001 },
      completion_cost_details: null,
      tenant_id: facts.tenant_id,
    });
    expect(r.json.start_time).toMatch(/^2024-01-01T00:00:00/);
    expect(r.json).not.toHaveProperty("match_path");
    const list = await call("GET", MAP, { headers: auth });
    expect(list.json).toContainEqual(r.json);
  });

  it("PUT replaces an entry, and an unknown id is a 404", async () => {
    const made = await call("POST", MAP, { headers: auth, body: entry() });
    const r = await call("PUT", `${MAP}/${made.json.id}`, {
      headers: auth,
      body: entry({ name: "renamed", prompt_cost: 1e-5, provider: null }),
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: made.json.id, name: "renamed", prompt_cost: 1e-5, provider: null });
    expect(r.json.created_at).toBe(made.json.created_at);
    const missing = await call("PUT", `${MAP}/${crypto.randomUUID()}`, { headers: auth, body: entry() });
    expect(missing.status).toBe(404);
  });

  it("DELETE removes an entry (defaults too, for good), and an unknown id is a 404", async () => {
    const { headers } = await freshTenant();
    const made = await call("POST", MAP, { headers, body: entry() });
    const r = await call("DELETE", `${MAP}/${made.json.id}`, { headers });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({});
    expect((await call("DELETE", `${MAP}/${made.json.id}`, { headers })).status).toBe(404);
    expect((await call("DELETE", `${MAP}/default-openai-gpt-4o`, { headers })).status).toBe(200);
    const ids = (await call("GET", MAP, { headers })).json.map((e: { id: string }) => e.id);
    expect(ids).not.toContain("default-openai-gpt-4o");
    expect(ids).not.toContain(made.json.id);
    expect(ids).toHaveLength(DEFAULT_PRICE_MAP.length - 1);
  });

  it("an invalid match_pattern regex is a 422 naming body.match_pattern", async () => {
    for (const method of ["POST", "PUT"]) {
      const path = method === "POST" ? MAP : `${MAP}/default-openai-gpt-4o`;
      const r = await call(method, path, { headers: auth, body: entry({ match_pattern: "gpt-(4o" }) });
      expect(r.status, method).toBe(422);
      expect(r.json.detail).toEqual([expect.objectContaining({ loc: ["body", "match_pattern"] })]);
    }
  });

  it("a pattern that could backtrack catastrophically is a 422 saying why, answered at once", async () => {
    for (const method of ["POST", "PUT"]) {
      const path = method === "POST" ? MAP : `${MAP}/default-openai-gpt-4o`;
      const started = Date.now();
      const r = await call(method, path, { headers: auth, body: entry({ match_pattern: "(a+)+$" }) });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(r.status, method).toBe(422);
      expect(r.json.detail).toEqual([
        expect.objectContaining({
          loc: ["body", "match_pattern"],
          msg: expect.stringMatching(/nested quantifiers/),
        }),
      ]);
    }
    const r = await call("POST", MAP, { headers: auth, body: entry({ match_pattern: "(a)\\1" }) });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].msg).toMatch(/backreferences/);
  });

  it("other bad bodies are 422s naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: undefined }, "name"],
      [{ prompt_cost: "cheap" }, "prompt_cost"],
      [{ completion_cost: -1 }, "completion_cost"],
      [{ prompt_cost_details: { cache_read: "x" } }, "prompt_cost_details"],
      [{ start_time: "soon" }, "start_time"],
    ];
    for (const [over, field] of cases) {
      const r = await call("POST", MAP, { headers: auth, body: entry(over) });
      expect(r.status, field).toBe(422);
      expect(r.json.detail[0].loc.slice(0, 2)).toEqual(["body", field]);
    }
  });

  it("entries are isolated per workspace", async () => {
    const mine = await call("POST", MAP, { headers: auth, body: entry() });
    const other = await freshTenant();
    const theirs = await call("GET", MAP, { headers: other.headers });
    expect(theirs.json.map((e: { id: string }) => e.id)).not.toContain(mine.json.id);
    expect(
      (await call("PUT", `${MAP}/${mine.json.id}`, { headers: other.headers, body: entry() })).status,
    ).toBe(404);
    expect((await call("DELETE", `${MAP}/${mine.json.id}`, { headers: other.headers })).status).toBe(404);
    expect((await call("GET", MAP, { headers: auth })).json).toContainEqual(mine.json);
  });

  it("priceEntriesFor gives ingestion the workspace's entries", async () => {
    const { tenant, headers } = await freshTenant();
    const made = await call("POST", MAP, { headers, body: entry() });
    const entries = await priceEntriesFor(tenant);
    expect(entries.map((e) => e.id)).toContain(made.json.id);
    expect(entries).toHaveLength(DEFAULT_PRICE_MAP.length + 1);
  });

  it("requests without an API key are 401s", async () => {
    expect((await call("GET", MAP)).status).toBe(401);
  });
});
