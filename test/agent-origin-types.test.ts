import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appRepoFiles, deployRepo, gitRepo } from "../harness/repos.ts";
import { consolePage, launchBrowser } from "./helpers/browser.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 33, finding High 3 and Medium 5: on the console's origin (/agents/{id}/…) a deployment's answer was
// sandboxed only when its Content-Type looked like a document, and Chromium renders `text/plain, text/html`,
// `text/xsl`, a malformed or a repeated type as HTML there: opened in a signed-in console tab, its script read
// the operator's API key from session storage. And its Set-Cookie passed through, on the shared origin and with
// Domain= to every other deployment's own origin. The deployment below lets anyone in (custom auth), so a
// browser opens its routes without a key, as a link sent to the operator would.
const AUTH = `import { Auth } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth().authenticate(async () => ({ identity: "anyone" }));
`;
// The page's script writes what it read of the tab's session storage into the title.
const STEAL =
  'document.title = "read:" + (() => { try { return JSON.stringify(Object.entries(sessionStorage)); } catch { return "refused"; } })();';
const HTML = `<html><head><title>page</title></head><body><script>${STEAL}</script></body></html>`;
const XHTML = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>page</title></head><body><script>${STEAL}</script></body></html>`;
const SVG = `<svg xmlns="http://www.w3.org/2000/svg"><title>page</title><script>${STEAL}</script></svg>`;
const APP = `import { Hono } from "hono";
export const app = new Hono();
const page = (body, headers) => () => new Response(body, { headers });
app.get("/as/list", page(${JSON.stringify(HTML)}, { "content-type": "text/plain, text/html" }));
app.get("/as/xsl", page(${JSON.stringify(XHTML)}, { "content-type": "text/xsl" }));
app.get("/as/malformed", page(${JSON.stringify(HTML)}, { "content-type": "html" }));
app.get("/as/repeated", page(${JSON.stringify(HTML)}, [["content-type", "text/plain"], ["content-type", "text/html"]]));
app.get("/as/svg", page(${JSON.stringify(SVG)}, { "content-type": "image/svg+xml" }));
app.get("/as/json", (c) => c.json({ passive: true }));
app.get("/cookie/shared", (c) => c.json({}, 200, { "set-cookie": "shared=1; Path=/" }));
app.get("/cookie/wide", (c) => c.json({}, 200, { "set-cookie": "wide=1; Path=/; Domain=" + c.req.query("domain") }));
app.get("/cookie/host", (c) => c.json({}, 200, { "set-cookie": "host=1; Path=/" }));
`;
const repo = gitRepo(appRepoFiles({ app: APP, auth: AUTH }));

const env = inject("env");
let id: string;
let browser: Browser;
let console_: Page;

beforeAll(async () => {
  [{ deploymentId: id }, browser] = await Promise.all([
    deployRepo(repo.dir, "origin-types", call, auth),
    // Own origins under AGENT_ORIGIN_DOMAIN (test/global-setup.ts) resolve to the local cloud.
    launchBrowser({ args: [`--host-resolver-rules=MAP *.${env.AGENT_ORIGIN_DOMAIN} 127.0.0.1`] }),
  ]);
  console_ = await consolePage(browser);
}, 240_000);
afterAll(async () => {
  await browser?.close();
  repo.remove();
});

/** The title the page at `path` ends with, opened in the signed-in console's tab. */
async function openedInConsoleTab(path: string): Promise<string> {
  const answer = await console_.goto(`${base}/agents/${id}${path}`);
  expect(answer?.status(), path).toBe(200);
  await console_.waitForTimeout(300);
  const title = await console_.title();
  await console_.goto(base);
  return title;
}

describe("a deployment's answer on the console's origin cannot read the console's session", () => {
  for (const [what, path] of [
    ["Content-Type: text/plain, text/html", "/as/list"],
    ["Content-Type: text/xsl", "/as/xsl"],
    ["a malformed Content-Type", "/as/malformed"],
    ["duplicated Content-Type headers", "/as/repeated"],
    ["Content-Type: image/svg+xml", "/as/svg"],
  ])
    it(`a page served as ${what}`, async () => {
      expect(await console_.evaluate('sessionStorage.getItem("console.session")')).toContain(facts.api_key);
      expect(await openedInConsoleTab(path)).not.toContain(facts.api_key);
    });

  it("a passive answer (JSON) is served as it is, with nosniff and no sandbox", async () => {
    const r = await fetch(`${base}/agents/${id}/as/json`);
    expect(await r.json()).toEqual({ passive: true });
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("content-security-policy") ?? "").not.toMatch(/sandbox/);
  });
});

describe("a deployment's cookies stay on its own origin", () => {
  it("its Set-Cookie on the shared origin reaches no cookie jar", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(`${base}/agents/${id}/cookie/shared`))?.status()).toBe(200);
    expect((await context.cookies()).map((c) => c.name)).not.toContain("shared");
    await context.close();
  });

  it("at its own origin a Domain= cookie (for every other deployment's origin) is dropped, a host-only one kept", async () => {
    // Under localhost Chromium takes no Domain= cookie at all; under a domain (AWS's wildcard) it would.
    const domain = env.AGENT_ORIGIN_DOMAIN;
    const context = await browser.newContext();
    const page = await context.newPage();
    const own = `http://${id}.${domain}:${new URL(base).port}`;
    expect((await page.goto(`${own}/cookie/wide?domain=${domain}`))?.status()).toBe(200);
    expect((await page.goto(`${own}/cookie/host`))?.status()).toBe(200);
    const jar = await context.cookies();
    expect(jar.map((c) => c.name)).not.toContain("wide");
    expect(jar.find((c) => c.name === "host")?.domain).toBe(`${id}.${domain}`);
    await context.close();
  });
});
