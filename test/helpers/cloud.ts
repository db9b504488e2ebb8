import { inject } from "vitest";
import { callAt } from "../../harness/http.ts";
import { resetClients } from "../../shared/aws/clients.ts";

// Test workers reach the shared local cloud over HTTP, and its AWS parts through the same env as handlers.
export const facts = inject("cloud");
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

export const base = facts.base_url;
export const auth = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };

export const call = callAt(base);
