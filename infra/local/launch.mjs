// `npm start` and `npm test` begin here, with nothing but Node: install what is missing, then run.
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const bootAt = Date.now();
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function ensureInstalled() {
  if (!existsSync(join(root, "node_modules", ".package-lock.json"))) {
    console.log("Installing dependencies (npm install)…");
    execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  }
}

// The OS sandbox of deployments' code (bubblewrap) on Linux: installed with the system's package manager when
// this runs as root and it is missing; otherwise the platform says at start what running without it means.
function ensureSandbox() {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return;
  const has = (tool) => {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (has("bwrap") || !has("apt-get")) return;
  console.log("Installing bubblewrap (the sandbox of deployments' code)…");
  // Set, never read: main.ts's config module is the one reader of the environment.
  process.env.DEBIAN_FRONTEND = "noninteractive";
  try {
    execFileSync(
      "sh",
      [
        "-c",
        "apt-get install -y -qq bubblewrap >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq bubblewrap)",
      ],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  } catch {
    console.log("bubblewrap could not be installed: agent runtimes will say what that means at start");
  }
}

// `npm start -- --graph x` arrives as `launch.mjs --graph x`: only a known first word is a mode.
const MODES = ["start", "prepare"];
const mode = MODES.includes(process.argv[2]) ? process.argv[2] : "start";
const rest = process.argv.slice(MODES.includes(process.argv[2]) ? 3 : 2);
ensureInstalled();
ensureSandbox();
const { ensureDynamoDbLocal, ensureSandboxNodes } = await import("./ensure-deps.mjs");
ensureDynamoDbLocal();
// Deployments' code runs on its Lambda runtime's Node.js major; a fetch that fails is said at start.
ensureSandboxNodes();
// The web console's files (console/dist), rebuilt when its sources changed.
const { buildConsole } = await import("../console/build.mjs");
await buildConsole();
if (mode === "prepare") {
  // The Lambda bundles the stacks and quota tests synthesize from (cached by content: ~1 s when unchanged).
  execFileSync(process.execPath, ["--import", "tsx", join(root, "infra/build/function-bundles.ts")], {
    cwd: root,
    stdio: "inherit",
  });
  process.exit(0);
}

// main.ts inherits this environment, with when the start began; the config module there validates it.
process.env.PLATFORM_BOOT_AT = String(bootAt);
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
// The flag is s3rver's, in this process (infra/local/s3.ts says why).
const child = spawn(
  process.execPath,
  ["--openssl-legacy-provider", "--import", "tsx", join(root, "infra/local/main.ts"), ...rest],
  { cwd: process.cwd(), stdio: "inherit" },
);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
