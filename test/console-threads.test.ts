import { Client } from "langsmith";
import { traceable } from "langsmith/traceable";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace } from "../harness/export.ts";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { facts } from "./helpers/cloud.ts";

// The console's threads tab (issue 27, item 4): a project's conversation threads, and a conversation's traces in
// the order they happened, each opening its trace. The turns are sent by the real langsmith SDK with the thread
// id in their metadata; in Chromium, in a workspace of its own.
let browser: Browser;
let ws: Awaited<ReturnType<typeof newWorkspace>>;
const project = `console-threads-${Date.now()}`;
const thread = `chat-${crypto.randomUUID().slice(0, 8)}`;
const questions = ["hello", "what is the weather", "thanks"];

beforeAll(async () => {
  ws = await newWorkspace();
  const client = new Client({ apiUrl: `${facts.base_url}/api/v1`, apiKey: ws.headers["X-Api-Key"] });
  const turn = traceable(async (q: string) => ({ answer: `re: ${q}` }), {
    client,
    tracingEnabled: true,
    project_name: project,
    name: "chat-turn",
    metadata: { thread_id: thread },
  });
  for (const q of questions) {
    await turn(q);
    await new Promise((r) => setTimeout(r, 20));
  }
  await client.awaitPendingTraceBatches();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => browser?.close());

describe("console: threads", () => {
  it("the Threads tab lists the conversation; opening it shows its turns in order, each opening its trace", async () => {
    const page = await consolePage(browser, { apiKey: ws.headers["X-Api-Key"], tenantId: ws.tenant });
    await page.goto(`${facts.base_url}/#/traces`);
    await page.getByRole("link", { name: project, exact: true }).click();
    await page
      .getByRole("navigation", { name: "Project views" })
      .getByRole("link", { name: "Threads" })
      .click();
    await page.getByRole("heading", { name: `Threads: ${project}` }).waitFor();
    const row = page
      .getByRole("table", { name: "Threads" })
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: thread, exact: true }) });
    await expect.poll(() => row.getByRole("cell").nth(1).textContent(), { timeout: 20_000 }).toBe("3");
    await screenshot(page, "threads-list");
    await row.getByRole("link", { name: thread, exact: true }).click();
    const turns = page.getByRole("list", { name: "Turns" });
    await turns.waitFor();
    const links = turns.getByRole("link");
    expect(await links.allTextContents()).toEqual(questions.map((_, i) => `Turn ${i + 1}: chat-turn`));
    const items = await turns.getByRole("listitem").allTextContents();
    questions.forEach((q, i) => {
      expect(items[i]).toContain(q);
      expect(items[i]).toContain(`re: ${q}`);
    });
    await screenshot(page, "thread-turns");
    await links.nth(1).click();
    await expect.poll(() => page.url()).toMatch(/#\/traces\/[^/]+\/trace\/[0-9a-f-]+$/);
    await page.getByRole("heading", { name: "Trace: chat-turn" }).waitFor();
  });
});
