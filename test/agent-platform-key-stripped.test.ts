import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRepoFiles, deployRepo, gitRepo } from "../harness/repos.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 25, item 7: a request carrying a platform API key is never forwarded to a deployment's auth handler or
// app with the key, whether the key let it in or not (unknown, refused for its X-Tenant-Id, of several
// workspaces). The deployment below echoes what its `authenticate` and its custom route saw; the app's own
// token (Authorization) reaches both.
const AUTH = `
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth().authenticate(async (request) => {
  if (request.headers.get("authorization") === "Bearer token-app") return { identity: "app-user" };
  throw new HTTPException(401, { message: JSON.stringify(Object.fromEntries(request.headers)) });
});
`;
const APP = `import { Hono } from "hono";
export const app = new Hono();
app.get("/seen", (c) => c.json(c.req.header()));
`;

const repo = gitRepo(appRepoFiles({ app: APP, auth: AUTH }));

let id: string;
let otherTenant: string;
let otherKey: string;
let sharedKey: string;

beforeAll(async () => {
  ({ deploymentId: id } = await deployRepo(repo.dir, "key-stripped", call, auth));
  otherTenant = newTenantId();
  await ensureTenant(otherTenant, "Other workspace");
  otherKey = newApiKey();
  await storeApiKey(otherKey, [otherTenant]);
  // A key of two workspaces, sent without X-Tenant-Id: refused as ambiguous.
  sharedKey = `shared-${crypto.randomUUID()}`;
  await storeApiKey(sharedKey, [facts.tenant_id, otherTenant]);
}, 240_000);

afterAll(() => repo.remove());

const keys = () => ({
  "an unknown key": { "X-Api-Key": `lsv2_pt_${"0".repeat(64)}` },
  "the workspace's key with another X-Tenant-Id": { "X-Api-Key": facts.api_key, "X-Tenant-Id": otherTenant },
  "the workspace's key as a bearer token with another X-Tenant-Id": {
    Authorization: `Bearer ${facts.api_key}`,
    "X-Tenant-Id": otherTenant,
  },
  "a key of several workspaces without X-Tenant-Id": { "X-Api-Key": sharedKey },
  "a key of another workspace": { "X-Api-Key": otherKey },
});

/** Every platform key a test sends: none may appear in what the deployment saw. */
const secrets = () => [facts.api_key, otherKey, sharedKey, `lsv2_pt_${"0".repeat(64)}`];

describe("a refused platform key never reaches the deployment", () => {
  it("its authenticate handler sees none of them", async () => {
    for (const [what, headers] of Object.entries(keys())) {
      const r = await fetch(`${base}/agents/${id}/threads/search`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: "{}",
      });
      expect(r.status, what).not.toBe(200);
      const body = await r.text();
      for (const s of secrets()) expect(body, what).not.toContain(s);
    }
  });

  it("its custom route sees the app's own token, and no platform key beside it", async () => {
    for (const [what, headers] of Object.entries(keys())) {
      if ("Authorization" in headers) continue;
      const r = await fetch(`${base}/agents/${id}/seen`, {
        headers: { ...headers, Authorization: "Bearer token-app" },
      });
      if (what === "a key of another workspace") {
        // That workspace's request: the deployment is not found there, nothing reached it.
        expect(r.status, what).toBe(404);
        continue;
      }
      expect(r.status, what).toBe(200);
      const seen = (await r.json()) as Record<string, string>;
      expect(seen.authorization, what).toBe("Bearer token-app");
      expect(seen["x-api-key"], what).toBeUndefined();
      for (const s of secrets()) expect(JSON.stringify(seen), what).not.toContain(s);
    }
  });

  it("what authenticate sees without a key is the request as it came", async () => {
    const r = await fetch(`${base}/agents/${id}/threads/search`, {
      method: "POST",
      headers: {
        "X-App-Header": "kept",
        Authorization: "Bearer end-user",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(r.status).toBe(401);
    const seen = JSON.parse(((await r.json()) as { detail: string }).detail);
    expect(seen).toMatchObject({ "x-app-header": "kept", authorization: "Bearer end-user" });
  });
});
