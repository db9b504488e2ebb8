import { randomBytes, randomUUID } from "node:crypto";
import { cancelCodes, transact, updateInput } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { secretHash } from "../crypto/secret-hash.ts";
import { BadRequest, Forbidden, NotFound, Unauthorized } from "../errors.ts";
import { apiKeyLinks, apiKeys, tenants } from "../records/identity.ts";
import { isoNow } from "../time.ts";

// API keys are stored as SHA-256 digests (they are 256-bit random, so a fast hash is enough) and bound
// to one or more workspaces (tenants). The plain key exists only in the caller's hands. Records:
// shared/records/identity.ts.

export function newApiKey(): string {
  return `lsv2_pt_${randomBytes(32).toString("hex")}`;
}

/** Why a key cannot be stored: it was revoked, and a revoked key stays revoked. */
export class KeyRevoked extends Error {
  constructor() {
    super("This API key was revoked: make a new one");
  }
}

/** Stores a key bound to the workspaces (its id kept when it exists); answers its id. */
export async function storeApiKey(key: string, tenants: string[], name?: string): Promise<string> {
  const hash = secretHash(key);
  const old = await apiKeys.get(hash, true);
  if (old?.revoked_at) throw new KeyRevoked();
  const kept = old?.name ?? name;
  const record = {
    id: old?.id ?? randomUUID(),
    key_prefix: key.slice(0, 12),
    created_at: old?.created_at ?? isoNow(),
    ...(kept ? { name: kept } : {}),
  };
  try {
    await transact([
      { Put: apiKeys.putInput(hash, { ...record, tenants }) },
      ...tenants.map((tenant) => ({ Put: apiKeyLinks.putInput({ ...record, tenant, key_hash: hash }) })),
    ]);
  } catch (err) {
    if (cancelCodes(err)?.[0] === "ConditionalCheckFailed") throw new KeyRevoked();
    throw err;
  }
  return record.id;
}

/**
 * Revokes a key by its digest: it answers 401 at once in this process and in every other within AUTH_CACHE_MS
 * (the lookup cache below: each Lambda environment's, in AWS too). False when no such key is live.
 */
export async function revokeApiKey(hash: string): Promise<boolean> {
  const item = await apiKeys.get(hash, true);
  if (!item || item.revoked_at) return false;
  await transact([
    { Update: updateInput("main", apiKeys.key(hash), { set: { revoked_at: isoNow() } }) },
    ...(item.id
      ? [...item.tenants].map((tenant) => ({ Delete: apiKeyLinks.deleteInput({ tenant, id: item.id! }) }))
      : []),
  ]);
  cache.delete(hash);
  return true;
}

/** The workspace's live keys: id, first characters, name and creation time (never the key nor its digest). */
export async function listApiKeys(tenant: string) {
  const links = await apiKeyLinks.list(`TENANT#${tenant}`, { prefix: "APIKEY#", consistent: true });
  return links.map((l) => ({
    id: l.id,
    short_key: l.key_prefix,
    description: l.name ?? null,
    created_at: l.created_at,
  }));
}

/** Revokes a key of the workspace by its id: 404 for another's, 403 for a key of other workspaces too. */
export async function revokeWorkspaceKey(tenant: string, id: string): Promise<void> {
  const link = await apiKeyLinks.get({ tenant, id }, true);
  const item = link && (await apiKeys.get(link.key_hash, true));
  if (!link || !item || item.revoked_at) throw new NotFound("API key not found");
  if ([...item.tenants].some((t) => t !== tenant))
    throw new Forbidden(
      "This API key acts on other workspaces too: the operator revokes it (npm run revoke-key)",
    );
  await revokeApiKey(link.key_hash);
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
  if (!item || item.revoked_at) return undefined;
  const tenants = [...item.tenants];
  // A key stored before keys had ids gets one (and its workspaces' listings) on its first use.
  if (!item.id) await storeApiKey(key, tenants).catch(() => undefined);
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

// What a platform key looks like (newApiKey, and the reference's `lsv2_pt_`/`lsv2_sk_` keys): a credential header
// holding such a value anywhere is stripped, even when the store does not know it (revoked, or mistyped).
const KEY_SHAPE = /lsv2_/i;
/** Headers read for a platform key (lower-cased names). */
const CREDENTIAL_HEADERS = ["x-api-key", "authorization"];
/** More values than this in one X-Api-Key (repeated headers, joined) are not looked up one by one: dropped. */
const MAX_CHECKED_VALUES = 4;

/** Whether the store knows the value as a key. */
const storedKey = async (value: string) => value.length <= 512 && (await tenantsOfKey(value)) !== undefined;

/** Whether a credential header's value carries a platform key: `Bearer <key>`, or X-Api-Key's value(s). */
async function carriesPlatformKey(
  name: string,
  value: string,
  known: (v: string) => Promise<boolean>,
): Promise<boolean> {
  if (KEY_SHAPE.test(value)) return true;
  const values =
    name === "authorization"
      ? [/^\s*Bearer\s+(.+)$/i.exec(value)?.[1]?.trim() ?? ""]
      : value.split(",").map((v) => v.trim());
  const candidates = values.filter(Boolean);
  if (candidates.length > MAX_CHECKED_VALUES) return true;
  for (const v of candidates) if (await known(v)) return true;
  return false;
}

/**
 * The request's headers without any platform API key (in `X-Api-Key`, or `Authorization: Bearer`): what a
 * deployment's runtime is given, its custom auth and app included, whether the key let the request in or not
 * (unknown, of another workspace, without a matching X-Tenant-Id). An app's own token stays.
 */
export async function withoutPlatformKeys<H extends Record<string, string | string[] | undefined>>(
  headers: H,
  known: (value: string) => Promise<boolean> = storedKey,
): Promise<H> {
  const out = { ...headers };
  for (const [name, raw] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!CREDENTIAL_HEADERS.includes(lower) || raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(",") : raw;
    if (await carriesPlatformKey(lower, value, known)) delete out[name];
  }
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
