import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pins from "./sandbox-node.json" with { type: "json" };

// The Node.js that runs deployments' code locally (runtimes, the smoke test, the build's install and bundling):
// the Lambda runtime's major (infra/stacks/node-function.ts, nodejs22.x), whatever Node the platform runs on, and
// the other majors Lambda runs runtimes on (a function whose Runtime is nodejs24.x runs on Node.js 24).
// infra/local/ensure-deps.mjs fetches each from the npm registry (node-<platform>-<arch>, its version and integrity
// pinned per target in sandbox-node.json) into the checkout's .cache; without it (another OS, CodeBuild) the
// platform's own Node runs.

/** The Node.js major deployments' code runs on, locally and as the Lambda runtime. */
export const SANDBOX_NODE_MAJOR = pins.major;

type Pin = { version: string; integrity: string };
const majors = pins.majors as Record<string, Record<string, Pin | undefined> | undefined>;

/** The pinned binary of a major for this machine, if any. */
const pinOf = (major: string): Pin | undefined => majors[major]?.[`${process.platform}-${process.arch}`];

/** The checkout: the nearest folder up from this code with a package.json (a bundle's too). */
function platformRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Where a major's fetched binary lives (the same path ensure-deps.mjs writes); undefined when none is pinned. */
export function fetchedNodePath(major = SANDBOX_NODE_MAJOR, root = platformRoot()): string | undefined {
  const pin = pinOf(major);
  return (
    pin &&
    path.join(root, ".cache", "node", `v${pin.version}-${process.platform}-${process.arch}`, "bin", "node")
  );
}

const chosen = new Map<string, string>();

/**
 * The Node binary sandboxed code of a major runs on: the fetched one when present; else, for the Lambda runtime's
 * major, the platform's own, and for another major the Lambda runtime's (sandboxNodeMajor says which).
 */
export function sandboxNode(major = SANDBOX_NODE_MAJOR): string {
  let binary = chosen.get(major);
  if (!binary) {
    const fetched = fetchedNodePath(major);
    binary =
      fetched && existsSync(fetched)
        ? fetched
        : major === SANDBOX_NODE_MAJOR
          ? process.execPath
          : sandboxNode(SANDBOX_NODE_MAJOR);
    chosen.set(major, binary);
  }
  return binary;
}

/** The major sandboxNode(major) runs, without starting it (a fetched binary is its pinned version). */
export function sandboxNodeMajor(major = SANDBOX_NODE_MAJOR): string {
  const binary = sandboxNode(major);
  if (binary === process.execPath) return process.versions.node.split(".")[0];
  for (const m of Object.keys(majors)) if (binary === fetchedNodePath(m)) return m;
  return SANDBOX_NODE_MAJOR;
}

/** The Node.js major a Lambda runtime identifier names (nodejs24.x: 24), or the Lambda runtime's own. */
export const nodeMajorOfRuntime = (runtime: string | undefined): string =>
  /^nodejs(\d+)\.x$/.exec(runtime ?? "")?.[1] ?? SANDBOX_NODE_MAJOR;
