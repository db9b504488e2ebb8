import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { listApiKeys, revokeApiKey } from "../../shared/auth/api-keys.ts";
import { dynamo } from "../../shared/aws/clients.ts";
import { fromItem, toItem } from "../../shared/aws/ddb.ts";
import { loadConfig } from "../../shared/config.ts";
import { secretHash } from "../../shared/crypto/secret-hash.ts";
import { tableName } from "../../shared/tables.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run revoke-key -- <key id | the key's first characters | the key>: revokes one API key, whatever workspaces it
// acts on (a workspace revokes its own keys with DELETE /api/v1/api-key/{id}). It answers 401 at once in new
// environments and in every warm one within AUTH_CACHE_MS. A prefix naming several live keys revokes none.
// npm run revoke-key -- --list <workspace-id>: the workspace's keys (ids, first characters; never a key).
// Tables of the deployed stack or the local cloud, as create-key.
const [arg, tenant] = process.argv.slice(2);
if (!arg || (arg === "--list" && !tenant)) {
  console.error("usage: npm run revoke-key -- <key id | key prefix | key>   or   --list <workspace-id>");
  process.exit(2);
}
if (arg === "--list") {
  console.log(JSON.stringify(await listApiKeys(tenant!), null, 2));
  process.exit(0);
}

/** Live keys whose id is `arg`, or whose stored first characters begin (or are begun by) `arg`. */
async function matching(): Promise<{ hash: string; id?: string; key_prefix: string; tenants: string[] }[]> {
  const found = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName: tableName("main"),
        FilterExpression: "begins_with(PK, :k) AND attribute_not_exists(revoked_at)",
        ExpressionAttributeValues: toItem({ ":k": "APIKEY#" }),
        ExclusiveStartKey: start,
      }),
    );
    for (const raw of page.Items ?? []) {
      const item = fromItem<{ PK: string; id?: string; key_prefix: string; tenants: string[] | Set<string> }>(
        raw,
      );
      const byPrefix =
        arg!.length >= 8 && (arg!.startsWith(item.key_prefix) || item.key_prefix.startsWith(arg!));
      if (item.id === arg || byPrefix)
        found.push({
          hash: item.PK.slice(7),
          id: item.id,
          key_prefix: item.key_prefix,
          tenants: [...item.tenants],
        });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

// A whole key names itself: its digest, without a scan.
const named = /^lsv2_/.test(arg) && arg.length > 40 ? [{ hash: secretHash(arg) }] : await matching();
if (named.length !== 1) {
  console.error(
    named.length
      ? `${named.length} keys match ${arg}: give its id (npm run revoke-key -- --list <workspace-id>) or more characters`
      : `No live API key matches ${arg} in ${tableName("main")}`,
  );
  process.exit(1);
}
if (!(await revokeApiKey(named[0].hash))) {
  console.error(`No live API key matches ${arg} in ${tableName("main")}`);
  process.exit(1);
}
console.log(JSON.stringify({ table: tableName("main"), revoked: { ...named[0], hash: undefined } }));
