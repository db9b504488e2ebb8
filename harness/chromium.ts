import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

// The machine's Chromium, for the browser tests and the console bench (which runs outside vitest).
export function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given && existsSync(given)) return given;
  for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
    try {
      const path = execFileSync("which", [name], { encoding: "utf8" }).trim();
      if (path) return path;
    } catch {}
  }
  throw new Error("No Chromium found: install it (apt-get install chromium) or set CHROMIUM_PATH");
}
