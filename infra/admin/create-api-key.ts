import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../../shared/auth/api-keys.ts";
import { tableName } from "../../shared/tables.ts";

// npm run create-key -- [workspace-id] [name]: creates a workspace (when new) and an API key bound to it,
// in the tables of the deployed stack (TABLE_MAIN, AWS credentials and region from the environment).
// The key is printed once; only its SHA-256 digest is stored.
const tenantId = process.argv[2] || newTenantId();
const name = process.argv[3] || "Default workspace";
await ensureTenant(tenantId, name);
const key = newApiKey();
await storeApiKey(key, [tenantId]);
console.log(JSON.stringify({ table: tableName("main"), tenant_id: tenantId, api_key: key }, null, 2));
