import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitRepo } from "../harness/repos.ts";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// The console's Deployments view in a real browser (issue 18 item 3): the example agent (examples/agent, as a
// git repository) deployed with a secret; its page shows the revision move to DEPLOYED on the timeline, its
// build log, the secret's name, and links to the agent server's docs and to the playground. The secret's value
// is in no page content nor in any answer the page received.
const EXAMPLE = fileURLToPath(new URL("../examples/agent", import.meta.url));
const SECRET = { name: "WEATHER_SERVICE_TOKEN", value: `console-secret-${crypto.randomUUID()}` };

let browser: Browser;
let repo: ReturnType<typeof gitRepo>;
let deployment: { id: string; name: string; revision: string };
const bodies: Promise<string>[] = [];

async function page(width = 1280): Promise<Page> {
  const p = await consolePage(browser, { width });
  p.on("response", (r) => {
    bodies.push(r.text().catch(() => ""));
  });
  return p;
}

async function noSecretIn(p: Page) {
  expect(await p.content()).not.toContain(SECRET.value);
  const all = await Promise.all(bodies);
  expect(all.length).toBeGreaterThan(3);
  for (const b of all) expect(b).not.toContain(SECRET.value);
}

beforeAll(async () => {
  browser = await launchBrowser();
  repo = gitRepo({}, {}, { from: EXAMPLE });
  const name = `console-weather-${crypto.randomUUID().slice(0, 6)}`;
  const created = await call("POST", "/v2/deployments", {
    headers: auth,
    body: {
      name,
      secrets: [SECRET],
      source: "github",
      source_config: { repo_url: repo.dir, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    },
  });
  expect(created.status, created.text).toBe(201);
  deployment = { id: created.json.id, name, revision: created.json.latest_revision_id };
});

afterAll(async () => {
  await browser?.close();
  if (deployment) await call("DELETE", `/v2/deployments/${deployment.id}`, { headers: auth });
  repo?.remove();
});

describe("console: deployments", () => {
  it("shows a deployment's revision reach DEPLOYED on its timeline, its build log and its secret by name only", async () => {
    // Opened while the first revision is still being built: the page follows it live.
    const p = await page();
    await p.goto(`${facts.base_url}/#/deployments/${deployment.id}`);
    await p.getByRole("heading", { level: 1, name: new RegExp(deployment.name) }).waitFor();
    const timeline = p.getByRole("list", { name: "Revision timeline" });
    const revision = timeline
      .getByRole("listitem")
      .filter({ has: p.getByRole("link", { name: `Revision ${deployment.revision}` }) });
    await revision.waitFor();
    const history = revision.getByRole("list", {
      name: `Status history of revision ${deployment.revision.slice(0, 8)}`,
    });
    await expect
      .poll(() => history.getByRole("listitem").allTextContents(), { timeout: 120_000, interval: 500 })
      .toContainEqual(expect.stringMatching(/^DEPLOYED /));
    // The steps it went through, in order, ending DEPLOYED.
    const steps = (await history.getByRole("listitem").allTextContents()).map((t) => t.split(" ")[0]);
    expect(steps[0]).toBe("QUEUED");
    expect(steps.at(-1)).toBe("DEPLOYED");
    expect(steps).toContain("BUILDING");
    await p.getByRole("status").filter({ hasText: "settled" }).waitFor({ timeout: 10_000 });

    const build = p.getByRole("region", { name: "Build log" });
    await expect.poll(() => build.textContent(), { timeout: 10_000 }).not.toContain("(not started)");
    expect(((await build.textContent()) ?? "").length).toBeGreaterThan(40);
    const deploy = p.getByRole("region", { name: "Deploy log" });
    await expect.poll(() => deploy.textContent(), { timeout: 10_000 }).not.toContain("(not started)");

    const secrets = p.getByRole("list", { name: "Secret names" });
    expect(await secrets.getByRole("listitem").allTextContents()).toEqual([SECRET.name]);

    const links = p.getByRole("navigation", { name: "Deployment links" });
    expect(await links.getByRole("link", { name: "Open playground" }).getAttribute("href")).toBe(
      `#/playground/${deployment.id}`,
    );
    expect(await links.getByRole("link", { name: "Open studio" }).getAttribute("href")).toBe(
      `#/studio/${deployment.id}`,
    );
    const docs = await links.getByRole("link", { name: "Agent server API docs" }).getAttribute("href");
    expect(docs).toBe(`/agents/${deployment.id}/docs`);
    expect((await fetch(`${facts.base_url}${docs}`, { headers: auth })).status).toBe(200);
    await screenshot(p, "deployment-revisions");

    const phone = await page(390);
    await phone.goto(`${facts.base_url}/#/deployments/${deployment.id}`);
    await phone.getByRole("list", { name: "Revision timeline" }).getByText("DEPLOYED").first().waitFor();
    await phone.getByRole("region", { name: "Build log" }).waitFor();
    await screenshot(phone, "deployment-revisions-phone");
    await noSecretIn(p);
    await noSecretIn(phone);
  }, 300_000);

  it("lists deployments with their status and links to a deployment's page", async () => {
    const p = await page();
    await p.goto(`${facts.base_url}/#/deployments`);
    await p.getByLabel("Name contains").fill(deployment.name);
    await p.getByRole("button", { name: "Filter" }).click();
    const table = p.getByRole("table", { name: "Deployments" });
    const row = table.getByRole("row", { name: new RegExp(deployment.name) });
    // The filtered page replaces the whole list once it arrives (the list may show first).
    await expect.poll(() => table.getByRole("row").count(), { timeout: 15_000 }).toBe(2);
    await row.waitFor();
    expect(await row.textContent()).toContain("READY");
    await p.getByLabel("Name contains").fill("");
    await p.getByRole("button", { name: "Filter" }).click();
    await table.getByRole("row", { name: new RegExp(deployment.name) }).waitFor();
    await screenshot(p, "deployments-list");
    const phone = await page(390);
    await phone.goto(`${facts.base_url}/#/deployments`);
    await phone.getByRole("table", { name: "Deployments" }).waitFor();
    await screenshot(phone, "deployments-list-phone");
    await row.getByRole("link", { name: deployment.name }).click();
    await p.getByRole("heading", { level: 1, name: new RegExp(deployment.name) }).waitFor();
    await noSecretIn(p);
  });
});
