// The web console (console/src, React) bundled for the browser with esbuild into console/dist: index.html,
// app.js, app.css and the chunks of lazily loaded views (chunk-<hash>.js: the studio) — no CDN at run time. `npm start` and `npm test` build it when its sources changed
// (launch.mjs); the CDK app deploys console/dist to S3 behind CloudFront.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const CONSOLE_SRC = join(root, "console", "src");
export const CONSOLE_DIST = join(root, "console", "dist");

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/**
 * A digest of the console's sources, the files outside console/src the last build bundled (`outside`, paths from
 * the root: shared/percentile.ts) and this script: the build is redone when it changes.
 */
function sourceDigest(outside) {
  const h = createHash("sha256");
  const extra = outside.map((f) => join(root, f)).filter((f) => existsSync(f));
  for (const f of [...files(CONSOLE_SRC), ...extra, fileURLToPath(import.meta.url)].sort()) {
    h.update(f.slice(root.length));
    h.update(readFileSync(f));
  }
  return h.digest("hex");
}

/** Builds console/dist unless it is up to date; returns the dist folder. */
export async function buildConsole({ force = false } = {}) {
  const stamp = join(CONSOLE_DIST, ".digest");
  const last = readStamp(stamp);
  if (!force && last && last.digest === sourceDigest(last.outside)) return CONSOLE_DIST;
  const { build } = await import("esbuild");
  // Chunks are named by content: old ones are removed so the folder holds one build.
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  mkdirSync(CONSOLE_DIST, { recursive: true });
  const { metafile } = await build({
    metafile: true,
    // Inputs in the metafile are named from here: the root.
    absWorkingDir: root,
    entryPoints: { app: join(CONSOLE_SRC, "main.tsx") },
    bundle: true,
    format: "esm",
    // The studio (graph layout and drawing) is a chunk loaded when opened, not part of the first load.
    splitting: true,
    chunkNames: "chunk-[hash]",
    target: "es2022",
    minify: true,
    sourcemap: false,
    outdir: CONSOLE_DIST,
    jsx: "automatic",
    loader: { ".css": "css" },
    define: { "process.env.NODE_ENV": '"production"' },
    legalComments: "none",
    logLevel: "warning",
  });
  writeFileSync(join(CONSOLE_DIST, "index.html"), readFileSync(join(CONSOLE_SRC, "index.html")));
  const outside = Object.keys(metafile.inputs).filter(
    (f) => !f.startsWith("console/src/") && !f.includes("node_modules/"),
  );
  writeFileSync(stamp, JSON.stringify({ digest: sourceDigest(outside), outside }));
  return CONSOLE_DIST;
}

function readStamp(stamp) {
  try {
    const s = JSON.parse(readFileSync(stamp, "utf8"));
    return typeof s.digest === "string" && Array.isArray(s.outside) ? s : undefined;
  } catch {
    return undefined;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildConsole({ force: process.argv.includes("--force") });
  console.log(`console built in ${CONSOLE_DIST}`);
}
