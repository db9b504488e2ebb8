import { randomBytes, randomUUID } from "node:crypto";
import { config } from "../config.ts";
import { secretHash } from "../crypto/secret-hash.ts";
import { BadRequest, Forbidden, Unauthorized } from "../errors.ts";
import { apiKeys, tenants } from "../records/identity.ts";
import { isoNow } from "../time.ts";

// API keys are stored as SHA-256 digests (they are 256-bit random, so a fast hash is enough) and bound
// to one or more workspaces (tenants). The plain key exists only in the caller's hands. Records:
// shared/records/identity.ts.

export function newApiKey(): string {
  return `lsv2_pt_${randomBytes(32).toString("hex")}`;
}

export async function storeApiKey(key: string, tenants: string[]): Promise<void> {
  await apiKeys.put(secretHash(key), { tenants, key_prefix: key.slice(0, 12), created_at: isoNow() });
}

/** Records the workspace unless it exists. */
export async function ensureTenant(tenantId: string, name: string): Promise<void> {
  await tenants.create({ id: tenantId, name, created_at: isoNow() });
}

export const newTenantId = () => randomUUID();

const cache = new Map<string, { tenants: string[]; until: number }>();

async function tenantsOfKey(key: string): Promise<string[] | undefined> {
  const hash = secretHash(key);
  const hit = cache.get(hash);
  if (hit && hit.until > Date.now()) return hit.tenants;
  const item = await apiKeys.get(hash);
  if (!item) return undefined;
  const tenants = [...item.tenants];
  cache.set(hash, { tenants, until: Date.now() + config.authCacheMs });
  return tenants;
}

/** Headers are lower-cased (API Gateway v2 does so). */
function apiKeyFrom(headers: Record<string, string | undefined>): string | undefined {
  const key = headers["x-api-key"]?.trim();
  if (key) return key;
  const auth = headers.authorization?.trim();
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  return m?.[1]?.trim() || undefined;
}

/**
 * The request's headers without the platform API key it was authenticated with (`X-Api-Key`, or an
 * `Authorization: Bearer` carrying it): what a deployment's runtime is given, so its code never sees a key.
 */
export function withoutApiKey<H extends Record<string, string | string[] | undefined>>(headers: H): H {
  const key = apiKeyFrom(headers as Record<string, string | undefined>);
  const out = { ...headers };
  delete out["x-api-key"];
  const auth = out.authorization;
  if (typeof auth === "string" && key && auth.trim().endsWith(key)) delete out.authorization;
  return out;
}

/** The workspace a request acts on: 401 unknown key, 403 key not bound to the tenant, 400 ambiguous. */
export async function authenticate(headers: Record<string, string | undefined>): Promise<string> {
  const key = apiKeyFrom(headers);
  if (!key || key.length > 512) throw new Unauthorized();
  const tenants = await tenantsOfKey(key);
  if (!tenants) throw new Unauthorized();
  const wanted = headers["x-tenant-id"]?.trim();
  if (wanted) {
    if (!tenants.includes(wanted))
      throw new Forbidden("This API key is not allowed for the workspace in X-Tenant-Id");
    return wanted;
  }
  if (tenants.length === 1) return tenants[0];
  throw new BadRequest("This API key belongs to several workspaces: send the X-Tenant-Id header");
}
