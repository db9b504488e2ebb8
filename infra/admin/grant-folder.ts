import { loadConfig } from "../../shared/config.ts";
import { grantedFolders, grantFolder, revokeFolder } from "../../shared/control/repo-grants.ts";
import { tenants } from "../../shared/records/identity.ts";
import { tableName } from "../../shared/tables.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run grant-folder -- <workspace-id> <folder> [--revoke]: the local cloud builds a workspace's deployments only
// from folders the operator granted it (their real paths, and below them); --revoke withdraws one. Tables of the
// local cloud (DATA_DIR's .data/local.json names them for a running `npm start`), as create-key.
const args = process.argv.slice(2);
const revoke = args.includes("--revoke");
const [tenantId, folder] = args.filter((a) => a !== "--revoke");
if (!tenantId || !folder) {
  console.error("usage: npm run grant-folder -- <workspace-id> <folder> [--revoke]");
  process.exit(2);
}
if (!(await tenants.get(tenantId))) {
  console.error(`No workspace ${tenantId} in ${tableName("main")}`);
  process.exit(1);
}
try {
  if (revoke) await revokeFolder(tenantId, folder);
  else await grantFolder(tenantId, folder);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
console.log(JSON.stringify({ tenant_id: tenantId, folders: await grantedFolders(tenantId) }));
