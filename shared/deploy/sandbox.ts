// Node's permission model for processes that run a deployment's code (its runtime, the deploy step's smoke
// test): they read only the folders named, write only their own scratch folder, and start no process or
// worker thread. Node 20 calls the switch --experimental-permission, Node 22+ --permission.
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has("--permission")
  ? "--permission"
  : "--experimental-permission";

export function sandboxFlags(opts: { read: string[]; write: string[] }): string[] {
  return [
    PERMISSION_FLAG,
    ...opts.read.map((dir) => `--allow-fs-read=${dir}`),
    ...opts.write.map((dir) => `--allow-fs-write=${dir}`),
    "--no-warnings",
  ];
}
