import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { facts } from "./cloud.ts";

// Browser tests: playwright-core driving the machine's Chromium (.ci/run installs it), headless, against the
// local cloud's console. Screenshots go to test-results/console/.
export const SCREENSHOTS = join(process.cwd(), "test-results", "console");

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

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** A page signed in to the console with `apiKey` (default: the local cloud's key) at `width` × 900. */
export async function consolePage(
  browser: Browser,
  opts: { apiKey?: string; tenantId?: string; width?: number } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(facts.base_url);
  await page.getByLabel("API key").fill(opts.apiKey ?? facts.api_key);
  if (opts.tenantId) await page.getByLabel("Workspace id (optional)").fill(opts.tenantId);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Sections" }).waitFor();
  return page;
}

export const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
