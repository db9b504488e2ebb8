import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pins from "./sandbox-node.json" with { type: "json" };

// The Node.js that runs deployments' code locally (runtimes, the smoke test, the build's install and bundling):
// the Lambda runtime's major (infra/stacks/node-function.ts, nodejs22.x), whatever Node the platform runs on.
// infra/local/ensure-deps.mjs fetches it from the npm registry (node-<platform>-<arch>, its integrity pinned in
// sandbox-node.json) into the checkout's .cache; without it (another OS, CodeBuild) the platform's own Node runs.

/** The Node.js major deployments' code runs on, locally and as the Lambda runtime. */
export const SANDBOX_NODE_MAJOR = pins.major;

/** The platform's checkout: the nearest folder up from this code with a package.json (a bundle's too). */
function platformRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Where the fetched binary lives (the same path ensure-deps.mjs writes). */
export function fetchedNodePath(root = platformRoot()): string {
  return path.join(
    root,
    ".cache",
    "node",
    `v${pins.version}-${process.platform}-${process.arch}`,
    "bin",
    "node",
  );
}

let chosen: string | undefined;

/** The Node binary sandboxed code runs on: the fetched one when present, else the platform's own. */
export function sandboxNode(): string {
  chosen ??= existsSync(fetchedNodePath()) ? fetchedNodePath() : process.execPath;
  return chosen;
}

/** Its major, without starting it (the fetched one is the pinned version). */
export function sandboxNodeMajor(): string {
  return sandboxNode() === process.execPath ? process.versions.node.split(".")[0] : pins.major;
}
