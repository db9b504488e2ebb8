import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { config } from "../shared/config.ts";
import { secretHash } from "../shared/crypto/secret-hash.ts";
import { call } from "./helpers/cloud.ts";

// Issue 33 (low findings): API keys can be revoked. A workspace's keys are listed without their secret; a key
// revoked by the operator (npm run revoke-key, or DELETE /api/v1/api-key/{id} with a key of the workspace)
// answers 401 at once where no process cached it, and everywhere within AUTH_CACHE_MS (each Lambda environment's
// cache: in AWS too).
const KEYS = "/api/v1/api-key";
const env = inject("env");
const cacheMs = Number(env.AUTH_CACHE_MS ?? config.authCacheMs);

async function workspace() {
  const tenant = newTenantId();
  await ensureTenant(tenant, "keys test");
  return tenant;
}
const headersOf = (key: string, tenant: string) => ({ "X-Api-Key": key, "X-Tenant-Id": tenant });
const keyIdOf = async (key: string, as: Record<string, string>) => {
  const listed = await call("GET", KEYS, { headers: as });
  return listed.json.find((k: { short_key: string }) => key.startsWith(k.short_key))?.id as string;
};

let tenant: string;
let admin: string;
beforeAll(async () => {
  tenant = await workspace();
  admin = newApiKey();
  await storeApiKey(admin, [tenant], "admin");
});

describe("API keys can be listed and revoked", () => {
  it("lists the workspace's keys by id, short key, name and created_at, never the secret nor its digest", async () => {
    const other = newApiKey();
    await storeApiKey(other, [tenant], "ci");
    const r = await call("GET", KEYS, { headers: headersOf(admin, tenant) });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      expect.arrayContaining([
        {
          id: expect.any(String),
          short_key: admin.slice(0, 12),
          description: "admin",
          created_at: expect.any(String),
        },
        {
          id: expect.any(String),
          short_key: other.slice(0, 12),
          description: "ci",
          created_at: expect.any(String),
        },
      ]),
    );
    for (const secret of [admin, other, secretHash(admin), secretHash(other)])
      expect(r.text).not.toContain(secret);
  });

  it("a key revoked through the route answers 401 on every route at once where it was not cached", async () => {
    const victim = newApiKey();
    await storeApiKey(victim, [tenant]);
    const id = await keyIdOf(victim, headersOf(admin, tenant));
    const revoked = await call("DELETE", `${KEYS}/${id}`, { headers: headersOf(admin, tenant) });
    expect(revoked.status).toBe(204);
    for (const path of ["/v2/deployments", "/api/v1/sessions", "/api/v1/bulk-exports/destinations", KEYS])
      expect((await call("GET", path, { headers: headersOf(victim, tenant) })).status, path).toBe(401);
    const listed = await call("GET", KEYS, { headers: headersOf(admin, tenant) });
    expect(listed.json.map((k: { id: string }) => k.id)).not.toContain(id);
    expect((await call("DELETE", `${KEYS}/${id}`, { headers: headersOf(admin, tenant) })).status).toBe(404);
  });

  it("a key used before its revocation is refused everywhere within AUTH_CACHE_MS", async () => {
    const used = newApiKey();
    await storeApiKey(used, [tenant]);
    expect((await call("GET", "/api/v1/sessions", { headers: headersOf(used, tenant) })).status).toBe(200);
    const id = await keyIdOf(used, headersOf(admin, tenant));
    expect((await call("DELETE", `${KEYS}/${id}`, { headers: headersOf(admin, tenant) })).status).toBe(204);
    const t0 = Date.now();
    while ((await call("GET", "/api/v1/sessions", { headers: headersOf(used, tenant) })).status !== 401) {
      expect(Date.now() - t0).toBeLessThan(cacheMs + 5_000);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 90_000);

  it("another workspace's key is a 404; a key of several workspaces is the operator's to revoke (403)", async () => {
    const other = await workspace();
    const theirs = newApiKey();
    await storeApiKey(theirs, [other]);
    const theirId = await keyIdOf(theirs, headersOf(theirs, other));
    expect((await call("DELETE", `${KEYS}/${theirId}`, { headers: headersOf(admin, tenant) })).status).toBe(
      404,
    );
    const shared = newApiKey();
    await storeApiKey(shared, [tenant, other]);
    const sharedId = await keyIdOf(shared, headersOf(admin, tenant));
    const r = await call("DELETE", `${KEYS}/${sharedId}`, { headers: headersOf(admin, tenant) });
    expect(r.status).toBe(403);
    expect(r.json.detail).toMatch(/npm run revoke-key/);
    expect((await call("GET", KEYS, { headers: headersOf(shared, other) })).status).toBe(200);
    expect((await call("GET", "/api/v1/sessions", { headers: headersOf(theirs, other) })).status).toBe(200);
  });

  it("npm run revoke-key revokes by id or by the key's first characters; an ambiguous prefix revokes nothing", async () => {
    const run = (arg: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "infra/admin/revoke-key.ts", arg], {
        env: { ...env },
        cwd: process.cwd(),
      }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
      );
    const byPrefix = newApiKey();
    const byId = newApiKey();
    await storeApiKey(byPrefix, [tenant]);
    await storeApiKey(byId, [tenant]);
    expect((await run("lsv2_pt_")).code).not.toBe(0);
    expect((await call("GET", KEYS, { headers: headersOf(byPrefix, tenant) })).status).toBe(200);
    expect((await run(byPrefix.slice(0, 24))).code).toBe(0);
    expect((await run(await keyIdOf(byId, headersOf(admin, tenant)))).code).toBe(0);
    for (const key of [byPrefix, byId])
      expect((await call("GET", "/v2/deployments", { headers: headersOf(key, tenant) })).status).toBe(401);
  });

  it("a revoked key is never stored again (a restart does not revive a revoked bootstrap key)", async () => {
    const key = newApiKey();
    await storeApiKey(key, [tenant]);
    const id = await keyIdOf(key, headersOf(admin, tenant));
    expect((await call("DELETE", `${KEYS}/${id}`, { headers: headersOf(admin, tenant) })).status).toBe(204);
    await expect(storeApiKey(key, [tenant])).rejects.toThrow(/revoked/);
    expect((await call("GET", "/v2/deployments", { headers: headersOf(key, tenant) })).status).toBe(401);
  });
});
