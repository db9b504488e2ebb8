import { chmodSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { chmod, lstat, mkdir } from "node:fs/promises";

// Folders the platform writes deployments' code, builds, environments or tokens to are this user's alone (0700):
// made with that mode, refused when a fixed name (under /tmp) is a link or another user's, narrowed when ours.
// `passThrough`: others' pass-through bit (x: enter a known name, never list) is kept where it is set — a root
// platform's sandboxes reach their own artifact (0700, their uid's) under the artifacts folder by it
// (sandbox.ts shareWithSandbox).

const PRIVATE = 0o700;
const narrowed = (mode: number, passThrough?: boolean) => PRIVATE | (passThrough ? mode & 0o001 : 0);

function refusal(dir: string, st: { isDirectory(): boolean; uid: number }): string | undefined {
  if (!st.isDirectory()) return `${dir} is not a folder (a link or a file holds its name)`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to another user (uid ${st.uid})`;
  return undefined;
}

/** Makes `dir` (missing parents too) a folder only this user may enter, and answers it. */
export async function privateDir(dir: string, opts: { passThrough?: boolean } = {}): Promise<string> {
  await mkdir(dir, { recursive: true, mode: PRIVATE });
  const st = await lstat(dir);
  const refused = refusal(dir, st);
  if (refused) throw new Error(refused);
  const mode = narrowed(st.mode, opts.passThrough);
  if ((st.mode & 0o777) !== mode) await chmod(dir, mode);
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
