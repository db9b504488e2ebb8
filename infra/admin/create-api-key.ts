import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../../shared/auth/api-keys.ts";
import { dynamo } from "../../shared/aws/clients.ts";
import { loadConfig } from "../../shared/config.ts";
import { tableName } from "../../shared/tables.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run create-key -- [workspace-id] [name]: creates a workspace (when new) and an API key bound to it,
// in the tables of the deployed stack (TABLE_MAIN; AWS credentials and region as the SDK resolves them:
// AWS_REGION, else the profile's region, as `cdk deploy` does). The key is printed once, with the region and table
// it was written to; only its SHA-256 digest is stored.
const tenantId = process.argv[2] || newTenantId();
const name = process.argv[3] || "Default workspace";
await ensureTenant(tenantId, name);
const key = newApiKey();
await storeApiKey(key, [tenantId]);
const region = await dynamo().config.region();
console.log(JSON.stringify({ region, table: tableName("main"), tenant_id: tenantId, api_key: key }, null, 2));
