import { loadConfig } from "../../shared/config.ts";
import { tenants } from "../../shared/records/identity.ts";
import { tableName } from "../../shared/tables.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run set-rate-limit -- <workspace-id> <requests-per-second> [burst]: the workspace's own rate limit, in place
// of WORKSPACE_RATE_LIMIT/WORKSPACE_RATE_BURST (0: none); `default` as the rate removes it. Platform processes
// read it within AUTH_CACHE_MS. Tables of the deployed stack or the local cloud, as create-key.
const [tenantId, rate, burst] = process.argv.slice(2);
if (
  !tenantId ||
  !rate ||
  (rate !== "default" && !(Number(rate) >= 0)) ||
  (burst !== undefined && !(Number(burst) >= 1))
) {
  console.error(
    "usage: npm run set-rate-limit -- <workspace-id> <requests-per-second | default> [burst ≥ 1]",
  );
  process.exit(2);
}
const found =
  rate === "default"
    ? await tenants.update(tenantId, { remove: ["rate_limit", "rate_burst"] })
    : await tenants.update(tenantId, {
        set: { rate_limit: Number(rate), ...(burst ? { rate_burst: Number(burst) } : {}) },
        ...(burst ? {} : { remove: ["rate_burst"] }),
      });
if (!found) {
  console.error(`No workspace ${tenantId} in ${tableName("main")}`);
  process.exit(1);
}
console.log(
  JSON.stringify({
    table: tableName("main"),
    tenant_id: tenantId,
    rate_limit: rate === "default" ? "default" : Number(rate),
    rate_burst: burst === undefined ? null : Number(burst),
  }),
);
