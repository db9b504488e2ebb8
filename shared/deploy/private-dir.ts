import { chmodSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { chmod, lstat, mkdir } from "node:fs/promises";

// Folders the platform writes deployments' code, builds, environments or tokens to are this user's alone (0700):
// made with that mode, refused when a fixed name (under /tmp) is a link or another user's, narrowed when ours.

const PRIVATE = 0o700;

function refusal(dir: string, st: { isDirectory(): boolean; uid: number }): string | undefined {
  if (!st.isDirectory()) return `${dir} is not a folder (a link or a file holds its name)`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to another user (uid ${st.uid})`;
  return undefined;
}

/** Makes `dir` (missing parents too) a folder only this user may enter, and answers it. */
export async function privateDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: PRIVATE });
  const st = await lstat(dir);
  const refused = refusal(dir, st);
  if (refused) throw new Error(refused);
  if ((st.mode & 0o777) !== PRIVATE) await chmod(dir, PRIVATE);
  return dir;
}

/** privateDir for start-up code; `follow`: a link the operator chose (DATA_DIR) is followed, not refused. */
export function privateDirSync(dir: string, opts: { follow?: boolean } = {}): string {
  mkdirSync(dir, { recursive: true, mode: PRIVATE });
  const st = opts.follow ? statSync(dir) : lstatSync(dir);
  const refused = refusal(dir, st);
  if (refused) throw new Error(refused);
  if ((st.mode & 0o777) !== PRIVATE) chmodSync(dir, PRIVATE);
  return dir;
}
