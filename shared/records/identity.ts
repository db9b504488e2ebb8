import { addToCounter, getItem, type Key, putInput, putItem } from "../aws/ddb.ts";
import { repository } from "../aws/repository.ts";

// Workspaces (tenants) and the API keys that act on them (main table).
//   tenant   PK TENANT#<tenant>              SK TENANT
//   api key  PK APIKEY#<SHA-256 of the key>  SK APIKEY   bound to one or more workspaces; revoked_at once revoked
//   key link PK TENANT#<tenant>              SK APIKEY#<key id>   a key of the workspace, listed by its id
//   requests PK RATE#<tenant>                SK <window start, ms>   `n` requests counted; TTL expires_at
//   folder   PK TENANT#<tenant>              SK REPOGRANT#<real path>   a local folder the operator granted it
// API keys are stored as SHA-256 digests (they are 256-bit random, so a fast hash is enough); the plain key
// exists only in the caller's hands.

export interface TenantRecord {
  id: string;
  name: string;
  created_at: string;
  /** The operator's own rate limit for this workspace (requests per second; 0: none), else the setting's. */
  rate_limit?: number;
  /** Its burst (requests in one window), else the setting's. */
  rate_burst?: number;
  /** The operator's own cap on this workspace's deployments, else WORKSPACE_MAX_DEPLOYMENTS. */
  max_deployments?: number;
}

const tenantKey = (id: string) => ({ PK: `TENANT#${id}`, SK: "TENANT" });
export const tenants = repository<TenantRecord, string>({
  table: "main",
  key: tenantKey,
  keysOf: (t) => tenantKey(t.id),
});

/** Local cloud: a folder (its real path) the operator granted a workspace's deployments to be built from. */
export interface RepoGrantRecord {
  tenant: string;
  folder: string;
  granted_at: string;
}

const repoGrantKey = (k: { tenant: string; folder: string }) => ({
  PK: `TENANT#${k.tenant}`,
  SK: `REPOGRANT#${k.folder}`,
});
export const repoGrants = repository<RepoGrantRecord, { tenant: string; folder: string }>({
  table: "main",
  key: repoGrantKey,
  keysOf: repoGrantKey,
});
export const repoGrantsPk = (tenant: string) => `TENANT#${tenant}`;

export interface ApiKeyRecord {
  /** The workspaces the key may act on: written as a list; a string set (written by hand) reads as a Set. */
  tenants: string[] | Set<string>;
  /** The key's first characters, to tell keys apart. */
  key_prefix: string;
  created_at: string;
  /** Its id (no secret): how it is listed and revoked. Keys stored before ids get one on their next use. */
  id?: string;
  name?: string;
  /** Set once revoked: the key authenticates nothing and is never stored again. */
  revoked_at?: string;
}

/** A key of a workspace, as its listing shows it: never the key nor its digest, which only the link holds. */
export interface ApiKeyLinkRecord {
  tenant: string;
  id: string;
  key_hash: string;
  key_prefix: string;
  name?: string;
  created_at: string;
}
const apiKeyLinkKey = (k: { tenant: string; id: string }) => ({
  PK: `TENANT#${k.tenant}`,
  SK: `APIKEY#${k.id}`,
});
export const apiKeyLinks = repository<ApiKeyLinkRecord, { tenant: string; id: string }>({
  table: "main",
  key: apiKeyLinkKey,
  keysOf: apiKeyLinkKey,
});

const apiKeyKey = (hash: string): Key => ({ PK: `APIKEY#${hash}`, SK: "APIKEY" });

/**
 * API keys by their hash. Not a `repository()`: the record is named by the key's hash, which it does not hold
 * itself (the hash is in the key attributes only).
 */
export const apiKeys = {
  key: apiKeyKey,
  get: (hash: string, consistent = false) => getItem<ApiKeyRecord>("main", apiKeyKey(hash), consistent),
  put: (hash: string, r: ApiKeyRecord) => putItem("main", { ...apiKeyKey(hash), ...r }),
  /** The Put of a transaction: never over a revoked key. */
  putInput: (hash: string, r: ApiKeyRecord) =>
    putInput(
      "main",
      { ...apiKeyKey(hash), ...r },
      { ConditionExpression: "attribute_not_exists(revoked_at)" },
    ),
};

/** Adds `n` requests to a workspace's window; answers the window's total, every process's flushes included. */
export const addRequests = (tenant: string, windowStart: number, n: number, expiresAt: number) =>
  addToCounter("main", { PK: `RATE#${tenant}`, SK: String(windowStart) }, "n", n, { expires_at: expiresAt });
