import { stat } from "node:fs/promises";
import path from "node:path";
import { real } from "../build/local-repos.ts";
import { isWithin } from "../build/paths.ts";
import { config } from "../config.ts";
import { repoGrants, repoGrantsPk } from "../records/identity.ts";
import { isoNow } from "../time.ts";

// Local cloud: the folders a workspace's deployments may be built from are the operator's grants to that
// workspace (npm run grant-folder), never another workspace's; the bootstrap workspace gets the folder
// `npm start` runs in. Records: shared/records/identity.ts.

/** A path the sort key can hold (DynamoDB's 1024-byte bound, with the record's prefix). */
const MAX_FOLDER_BYTES = 900;

/** Grants `folder` (its real path, which must be a directory) to the workspace; answers the real path. */
export async function grantFolder(tenant: string, folder: string): Promise<string> {
  const at = await real(path.resolve(folder));
  if (!(await stat(at).catch(() => undefined))?.isDirectory()) throw new Error(`${folder} is not a folder`);
  // A grant may hold DATA_DIR (the checkout holds .data); the repositories under it are checked when deployed.
  if (isWithin(await real(config.dataDir), at))
    throw new Error(`${at} is in the platform's data folder (DATA_DIR)`);
  if (Buffer.byteLength(at) > MAX_FOLDER_BYTES)
    throw new Error(`${at} is longer than ${MAX_FOLDER_BYTES} bytes`);
  await repoGrants.put({ tenant, folder: at, granted_at: isoNow() });
  return at;
}

/** Withdraws a grant (the folder as granted, or as it resolves now). */
export async function revokeFolder(tenant: string, folder: string): Promise<void> {
  const named = path.resolve(folder);
  for (const f of new Set([named, await real(named)])) await repoGrants.delete({ tenant, folder: f });
}

/** The folders granted to the workspace (real paths). */
export async function grantedFolders(tenant: string): Promise<string[]> {
  if (!config.localMode) return [];
  return (await repoGrants.list(repoGrantsPk(tenant), { prefix: "REPOGRANT#", consistent: true })).map(
    (g) => g.folder,
  );
}
