import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newBucket, newWorkspace, runsOverDays, s3Proxy, waitFor } from "../harness/export.ts";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { call, customer, facts } from "./helpers/cloud.ts";

// The console's Exports view in a real browser (issue 18 item 2): runs ingested over two days and exported by
// the real state machine to the local S3 (through a proxy that slows uploads, so the page is seen live); the
// export's page shows its runs reach Completed with their rows; another export is cancelled from its page.
// No destination secret may reach the page: neither in its content nor in any answer it received.
const DAYS = ["2026-04-01", "2026-04-02"];
const PER_DAY = 12;
const SECRET = customer.s3.secret_access_key;

let browser: Browser;
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let project: string;
let proxy: Awaited<ReturnType<typeof s3Proxy>>;
let dest: string;
const bodies: Promise<string>[] = [];

/** A console page signed in to the test's workspace that keeps every answer it receives. */
async function page(width = 1280): Promise<Page> {
  const p = await consolePage(browser, { apiKey: ws.headers["X-Api-Key"], tenantId: ws.tenant, width });
  p.on("response", (r) => {
    bodies.push(r.text().catch(() => ""));
  });
  return p;
}

async function createExport(): Promise<string> {
  const r = await call("POST", "/api/v1/bulk-exports", {
    headers: ws.headers,
    body: {
      bulk_export_destination_id: dest,
      session_id: project,
      start_time: `${DAYS[0]}T00:00:00Z`,
      end_time: "2026-04-03T00:00:00Z",
    },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.id;
}

async function noSecretIn(p: Page) {
  expect(SECRET.length).toBeGreaterThan(3);
  expect(await p.content()).not.toContain(SECRET);
  const all = await Promise.all(bodies);
  expect(all.length).toBeGreaterThan(3);
  for (const b of all) expect(b).not.toContain(SECRET);
}

beforeAll(async () => {
  browser = await launchBrowser();
  ws = await newWorkspace();
  const name = `console-export-${crypto.randomUUID().slice(0, 6)}`;
  const r = await call("POST", "/api/v1/runs/batch", {
    headers: ws.headers,
    body: { post: runsOverDays(name, DAYS[0], DAYS.length, PER_DAY) },
  });
  expect(r.status).toBe(202);
  project = await waitFor("the project", async () => {
    const s = await call("GET", `/api/v1/sessions?name=${name}`, { headers: ws.headers });
    return s.json?.[0]?.id as string | undefined;
  });
  proxy = await s3Proxy(customer.s3.endpoint);
  const bucket = await newBucket(customer);
  const d = await call("POST", "/api/v1/bulk-exports/destinations", {
    headers: ws.headers,
    body: {
      destination_type: "s3",
      display_name: "Console team bucket",
      config: { bucket_name: bucket, prefix: "console/runs", endpoint_url: proxy.endpoint },
      credentials: { access_key_id: customer.s3.access_key_id, secret_access_key: SECRET },
    },
  });
  expect(d.status, d.text).toBe(200);
  dest = d.json.id;
});

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
});

describe("console: exports", () => {
  it("lists destinations (key names, no secret) and exports; an export's runs are watched live to Completed, a retried one with its retry_0 error", async () => {
    const p = await page();
    await p.goto(`${facts.base_url}/#/exports`);
    const dests = p.getByRole("table", { name: "Destinations" });
    const row = dests.getByRole("row", { name: /Console team bucket/ });
    await row.waitFor();
    expect(await row.textContent()).toContain("access_key_id, secret_access_key");
    expect(await row.textContent()).toContain("console/runs");

    // Uploads slowed (so the page is open while it runs), the first one failing (so a run is retried).
    proxy.delayMs = 3000;
    proxy.failNext(1);
    const id = await createExport();
    await p.goto(`${facts.base_url}/#/exports/${id}`);
    await p.getByRole("heading", { level: 1, name: new RegExp(`Export ${id.slice(0, 8)}`) }).waitFor();
    const runs = p.getByRole("table", { name: "Runs" });
    // Seen live: the page says it refreshes while the export is not final.
    await p.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 10_000 });
    for (const day of DAYS)
      await runs.getByRole("row", { name: new RegExp(day) }).waitFor({ timeout: 60_000 });
    await waitFor(
      "both runs Completed in the page",
      async () => {
        const texts = await runs.getByRole("row").allTextContents();
        return texts.filter((t) => t.includes("Completed")).length === DAYS.length || undefined;
      },
      120_000,
      250,
    );
    const retries: string[] = [];
    for (const day of DAYS) {
      const cells = await runs
        .getByRole("row", { name: new RegExp(day) })
        .getByRole("cell")
        .allTextContents();
      // Status, rows, files (a count that opens to their keys), retries, errors.
      expect(cells[0]).toBe("Completed");
      expect(cells[1]).toBe(String(PER_DAY));
      expect(cells[2]).toMatch(/^1console\/runs\/export_id=/);
      retries.push(cells[3]);
      if (cells[3] === "1") expect(cells[4]).toMatch(/^retry_0: .*(injected failure|InternalError)/);
      else expect(cells[4]).toBe("—");
    }
    expect(retries.sort()).toEqual(["0", "1"]);
    await p.getByRole("status").filter({ hasText: "Final" }).waitFor({ timeout: 10_000 });
    await expect
      .poll(() => p.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 })
      .toContain("Completed");
    await screenshot(p, "export-live");
    await p.goto(`${facts.base_url}/#/exports`);
    const listed = p
      .getByRole("table", { name: "Bulk exports" })
      .getByRole("row", { name: new RegExp(id.slice(0, 8)) });
    await listed.waitFor();
    expect(await listed.textContent()).toContain("Completed");
    await screenshot(p, "exports-list");
    await listed.getByRole("link", { name: `Export ${id}` }).click();
    await p.getByRole("table", { name: "Runs" }).waitFor();

    const phone = await page(390);
    await phone.goto(`${facts.base_url}/#/exports/${id}`);
    await phone
      .getByRole("table", { name: "Runs" })
      .getByRole("row", { name: new RegExp(DAYS[1]) })
      .waitFor();
    await screenshot(phone, "export-live-phone");
    await phone.goto(`${facts.base_url}/#/exports`);
    await phone.getByRole("table", { name: "Destinations" }).waitFor();
    await screenshot(phone, "exports-list-phone");
    await noSecretIn(p);
    await noSecretIn(phone);
  }, 300_000);

  it("cancels a running export from its page, after a confirmation", async () => {
    // Uploads held long enough that the export is still running when the cancel is confirmed.
    proxy.delayMs = 15_000;
    const id = await createExport();
    await waitFor("the export to run", async () => {
      const r = await call("GET", `/api/v1/bulk-exports/${id}`, { headers: ws.headers });
      return r.json.status === "Running" || undefined;
    });
    const p = await page();
    await p.goto(`${facts.base_url}/#/exports/${id}`);
    await p.getByRole("button", { name: "Cancel export" }).click();
    const dialog = p.getByRole("alertdialog", { name: "Cancel this export?" });
    await dialog.waitFor();
    // Backing out leaves it running.
    await dialog.getByRole("button", { name: "Keep it" }).click();
    await dialog.waitFor({ state: "detached" });
    expect((await call("GET", `/api/v1/bulk-exports/${id}`, { headers: ws.headers })).json.status).toBe(
      "Running",
    );
    await p.getByRole("button", { name: "Cancel export" }).click();
    await dialog.getByRole("button", { name: "Yes, cancel the export" }).click();
    await expect
      .poll(() => p.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 })
      .toContain("Cancelled");
    expect((await call("GET", `/api/v1/bulk-exports/${id}`, { headers: ws.headers })).json.status).toBe(
      "Cancelled",
    );
    // Its runs settle (Cancelled, or Completed for a day already written) and the page stops refreshing.
    await p.getByRole("status").filter({ hasText: "Final" }).waitFor({ timeout: 20_000 });
    const statuses = await p.getByRole("table", { name: "Runs" }).getByRole("row").allTextContents();
    expect(statuses.slice(1).some((t) => t.includes("Cancelled"))).toBe(true);
    expect(await p.getByRole("button", { name: "Cancel export" }).count()).toBe(0);
    await screenshot(p, "export-cancelled");
    await noSecretIn(p);
  }, 180_000);
  it("a scheduled export's page shows the runs of the exports it spawned, each linked to its export", async () => {
    proxy.delayMs = 0;
    const start = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 49 * 3_600_000).toISOString();
    const created = await call("POST", "/api/v1/bulk-exports", {
      headers: ws.headers,
      body: { bulk_export_destination_id: dest, session_id: project, start_time: start, interval_hours: 24 },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id;
    const p = await page();
    await p.goto(`${facts.base_url}/#/exports`);
    const listed = p
      .getByRole("table", { name: "Bulk exports" })
      .getByRole("row", { name: new RegExp(id.slice(0, 8)) });
    await listed.waitFor();
    expect(await listed.textContent()).toMatch(/scheduled.*IntervalScheduled.*every 24 h from/);
    await listed.getByRole("link", { name: `Export ${id}` }).click();
    const spawned = p.getByRole("table", { name: "Runs of spawned exports" });
    await waitFor(
      "two spawned windows Completed in the page",
      async () => {
        const rows = await spawned.getByRole("row").allTextContents();
        return rows.filter((t) => t.includes("Completed")).length >= 2 || undefined;
      },
      60_000,
    );
    const links = spawned.getByRole("link");
    expect(await links.count()).toBeGreaterThanOrEqual(2);
    await screenshot(p, "export-scheduled");
    // A spawned export's page links back to its schedule.
    await links.first().click();
    await p.getByRole("link", { name: `scheduled export ${id.slice(0, 8)}` }).waitFor();
    await p.getByRole("link", { name: `scheduled export ${id.slice(0, 8)}` }).click();
    await p.getByRole("button", { name: "Cancel export" }).click();
    await p.getByRole("alertdialog").getByText("The schedule stops").waitFor();
    await p.getByRole("button", { name: "Yes, cancel the export" }).click();
    await expect
      .poll(() => p.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 })
      .toContain("Cancelled");
    await noSecretIn(p);
  }, 180_000);
});
