import { inject } from "vitest";
import { callAt } from "../../harness/http.ts";
import { grantTestFolders } from "../../harness/repos.ts";
import type { LocalFacts } from "../../infra/local/cloud.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../../shared/auth/api-keys.ts";
import { resetClients } from "../../shared/aws/clients.ts";

// Test workers reach the shared local cloud over HTTP, and its AWS parts through the same env as handlers.
/** The local cloud's own facts: its bootstrap workspace and key, as local.json gives them to an operator. */
export const cloudFacts = inject("cloud");
/** A workspace's own S3 for export destinations (the platform's is refused as one). */
export const customer = inject("customerS3");
const env = inject("env");
for (const k of Object.keys(env)) {
  if (
    k.startsWith("AWS_") ||
    k.startsWith("TABLE_") ||
    k.startsWith("STATE_MACHINE_") ||
    k.startsWith("EXPORT_") ||
    k === "PLATFORM_LOCAL" ||
    k === "KMS_KEY_ID" ||
    k === "PLATFORM_BUCKET" ||
    k === "ARTIFACT_BUCKET"
  ) {
    process.env[k] = env[k];
  }
}
resetClients();

/**
 * The test files run side by side against the one local cloud: each gets a workspace and a key of its own (the
 * temp folder and the checkout granted, as the bootstrap workspace's are), so no file sees another's records,
 * listings, limits or rate. `facts` is the cloud's, with that workspace and key in place of the bootstrap's.
 */
async function fileWorkspace(): Promise<LocalFacts> {
  const tenant = newTenantId();
  const key = newApiKey();
  await ensureTenant(tenant, `test file ${tenant.slice(0, 8)}`);
  await storeApiKey(key, [tenant]);
  await grantTestFolders(tenant);
  return { ...cloudFacts, tenant_id: tenant, api_key: key };
}
export const facts = await fileWorkspace();

export const base = facts.base_url;
export const auth = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };

export const call = callAt(base);
