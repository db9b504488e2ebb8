import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { facts } from "./helpers/cloud.ts";

// The web console in a real browser (issue 18): served by the local gateway at `/`, signed in with an API key.
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe("web console", () => {
  it("is served at / with its own files only (CSP) and asks for an API key; a wrong key is refused", async () => {
    const r = await fetch(`${facts.base_url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await r.text();
    expect(html).toContain('src="./app.js"');
    expect(html).not.toMatch(/https?:\/\//);
    const page = await (await browser.newContext()).newPage();
    await page.goto(facts.base_url);
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/not valid/);
  });

  it("signs in and shows its sections; signing out forgets the key", async () => {
    const page = await consolePage(browser);
    const nav = page.getByRole("navigation", { name: "Sections" });
    for (const name of ["Traces", "Exports", "Deployments"]) await nav.getByRole("link", { name }).waitFor();
    expect(await page.evaluate('sessionStorage.getItem("console.session")')).toContain(facts.api_key);
    await screenshot(page, "signed-in");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate('sessionStorage.getItem("console.session")')).toBeNull();
  });
});
