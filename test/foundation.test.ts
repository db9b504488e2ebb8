import { describe, expect, it } from "vitest";
import { ensureTenant, newApiKey, storeApiKey } from "../shared/auth/api-keys.ts";
import { putItem } from "../shared/aws/ddb.ts";
import { tokenPk } from "../shared/oauth/tokens.ts";
import { auth, call, cloudFacts, facts } from "./helpers/cloud.ts";

const EXISTS = "/v2/auth/tokens/exists";

describe("system", () => {
  it("GET /ok answers {ok:true} once the services are ready", async () => {
    const r = await call("GET", "/ok");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true });
  });

  it("an unknown route is a JSON 404", async () => {
    const r = await call("GET", "/no/such/route");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.json.detail).toBe("Not Found");
  });

  it("a body over the limit is a 413", async () => {
    const r = await call("POST", "/ok", { raw: "x".repeat(21 * 1024 * 1024) });
    expect(r.status).toBe(413);
    expect(r.json.detail).toMatch(/limit/);
  });

  it("GET /api/v1/info gives version, batch_ingest_config and instance_flags", async () => {
    const r = await call("GET", "/api/v1/info");
    expect(r.status).toBe(200);
    expect(r.json.version).toEqual(expect.any(String));
    expect(r.json.batch_ingest_config).toMatchObject({
      use_multipart_endpoint: expect.any(Boolean),
      size_limit: expect.any(Number),
      size_limit_bytes: expect.any(Number),
      scale_up_qsize_trigger: expect.any(Number),
      scale_up_nthreads_limit: expect.any(Number),
      scale_down_nempty_trigger: expect.any(Number),
    });
    expect(r.json.instance_flags).toHaveProperty("gzip_body_enabled");
  });

  it("the OpenAPI document lists every route with its query parameters", async () => {
    const r = await call("GET", "/openapi.json");
    expect(r.status).toBe(200);
    const op = r.json.paths[EXISTS].get;
    expect(op.parameters).toContainEqual(
      expect.objectContaining({ name: "provider_id", in: "query", required: true }),
    );
    expect(op.responses["422"]).toBeDefined();
    expect(r.json.components.securitySchemes).toHaveProperty("BearerAuth");
  });
});

describe("auth", () => {
  it("no API key is a 401 whatever else is wrong with the request", async () => {
    const r = await call("GET", EXISTS);
    expect(r.status).toBe(401);
  });

  it("an unknown API key is a 401", async () => {
    const r = await call("GET", `${EXISTS}?provider_id=github`, { headers: { "X-Api-Key": "lsv2_pt_nope" } });
    expect(r.status).toBe(401);
  });

  it("the X-Api-Key header is read in any case", async () => {
    for (const name of ["x-api-key", "X-API-KEY", "X-Api-Key"]) {
      const r = await call("GET", `${EXISTS}?provider_id=github`, { headers: { [name]: facts.api_key } });
      expect(r.status, name).toBe(200);
    }
  });

  it("a bearer platform API key is accepted", async () => {
    const r = await call("GET", `${EXISTS}?provider_id=github`, {
      headers: { Authorization: `Bearer ${facts.api_key}` },
    });
    expect(r.status).toBe(200);
  });

  it("a key not allowed for the named tenant is a 403", async () => {
    const r = await call("GET", `${EXISTS}?provider_id=github`, {
      headers: { ...auth, "X-Tenant-Id": crypto.randomUUID() },
    });
    expect(r.status).toBe(403);
  });

  it("without X-Tenant-Id a key of several workspaces is a 400 naming the header", async () => {
    const key = newApiKey();
    await storeApiKey(key, [crypto.randomUUID(), crypto.randomUUID()]);
    const r = await call("GET", `${EXISTS}?provider_id=github`, { headers: { "X-Api-Key": key } });
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/X-Tenant-Id/);
  });

  it("API keys are stored hashed, never in plain text", async () => {
    const { getItem } = await import("../shared/aws/ddb.ts");
    const { secretHash } = await import("../shared/crypto/secret-hash.ts");
    // The key the local cloud made at its start, as an operator's is.
    const item = await getItem("main", { PK: `APIKEY#${secretHash(cloudFacts.api_key)}`, SK: "APIKEY" });
    expect(item).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(cloudFacts.api_key);
  });
});

describe("GET /v2/auth/tokens/exists", () => {
  it("a missing provider_id is a 422 with loc [query, provider_id]", async () => {
    const r = await call("GET", EXISTS, { headers: auth });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([
      { loc: ["query", "provider_id"], msg: expect.any(String), type: "missing" },
    ]);
  });

  it("answers has_token false when the workspace has no token", async () => {
    const r = await call("GET", `${EXISTS}?provider_id=github`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ has_token: false });
  });

  it("answers has_token true once the workspace has a token, and only for that workspace", async () => {
    await putItem("main", { PK: tokenPk(facts.tenant_id), SK: "acme#t1", provider_id: "acme" });
    const mine = await call("GET", `${EXISTS}?provider_id=acme`, { headers: auth });
    expect(mine.json).toEqual({ has_token: true });
    const otherTenant = crypto.randomUUID();
    const key = newApiKey();
    await ensureTenant(otherTenant, "other");
    await storeApiKey(key, [otherTenant]);
    const theirs = await call("GET", `${EXISTS}?provider_id=acme`, { headers: { "X-Api-Key": key } });
    expect(theirs.json).toEqual({ has_token: false });
  });

  it("answers the same under the self-hosted /api-host prefix", async () => {
    const ok = await call("GET", `/api-host${EXISTS}?provider_id=github`, { headers: auth });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ has_token: false });
    const bad = await call("GET", `/api-host${EXISTS}`, { headers: auth });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["query", "provider_id"]);
    expect((await call("GET", `/api-host${EXISTS}`)).status).toBe(401);
  });
});
