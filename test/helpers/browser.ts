import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { chromiumPath } from "../../harness/chromium.ts";
import { facts } from "./cloud.ts";

// Browser tests: playwright-core driving the machine's Chromium (.ci/run installs it), headless, against the
// local cloud's console. Screenshots go to test-results/console/.
export const SCREENSHOTS = join(process.cwd(), "test-results", "console");

/** Chromium, headless; `args` adds command-line switches (e.g. --host-resolver-rules). */
export async function launchBrowser(opts: { args?: string[] } = {}): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", ...(opts.args ?? [])],
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
