import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { facts } from "./helpers/cloud.ts";

// The console's chat playground in a real browser (issue 18 item 3): examples/agent deployed through the control
// plane; the page chats with its `agent` graph (the answer, the get_weather call and its result streamed) and
// with `agent_with_approval` (word-by-word answers, an interrupt resumed by Approve, Edit and Reject), and
// browses a thread's checkpoints. The API key never reaches the page's content or any answer it received.
let browser: Browser;
let deploymentId: string;
let repo: { remove: () => void } | undefined;
const bodies: Promise<string>[] = [];

async function playground(width = 1280): Promise<Page> {
  const page = await consolePage(browser, { width, tenantId: facts.tenant_id });
  page.on("response", (r) => {
    bodies.push(r.text().catch(() => ""));
  });
  await page.goto(`${facts.base_url}/#/playground/${deploymentId}`);
  await page.getByRole("heading", { name: "Playground" }).waitFor();
  return page;
}

async function chooseAssistant(page: Page, graph: string) {
  const select = page.getByLabel("Assistant");
  await expect.poll(() => select.locator("option").allTextContents(), SOON).toContain(graph);
  await select.selectOption({ label: graph });
}

async function send(page: Page, text: string) {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

// The agent server answers its first calls once its runtime has loaded the graphs: seconds, not one.
const SOON = { timeout: 30_000 };

const messages = (page: Page) => page.getByRole("log", { name: "Messages" });

/** The run's stream has ended: the page no longer says it is streaming. */
const runEnded = (page: Page) =>
  expect.poll(() => page.getByRole("status").textContent(), SOON).not.toContain("Streaming");

async function noKeyIn(page: Page) {
  expect(await page.content()).not.toContain(facts.api_key);
  // Every answer has ended by now (the runs did); one still open after 20 s is a failure, not a hang.
  const late = new Promise<string>((_, reject) =>
    setTimeout(() => reject(new Error("an answer to the page did not end within 20 s")), 20_000),
  );
  for (const b of await Promise.race([Promise.all(bodies), late])) expect(b).not.toContain(facts.api_key);
}

beforeAll(async () => {
  browser = await launchBrowser();
  const r = gitRepo({}, {}, { from: "examples/agent" });
  repo = r;
  ({ deploymentId } = await deployedClient(facts, r.dir, "playground"));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  repo?.remove();
});

describe("console playground", () => {
  it("without a deployment lists the deployments to pick from", async () => {
    const page = await consolePage(browser, { tenantId: facts.tenant_id });
    await page.goto(`${facts.base_url}/#/playground`);
    await page.getByRole("list", { name: "Deployments" }).getByRole("link").first().waitFor();
    const link = page.locator(`a[href="#/playground/${deploymentId}"]`);
    await link.click();
    await page.getByLabel("Assistant").waitFor();
  });

  it("chats with the agent: the streamed answer, the get_weather call with its args and its result", async () => {
    const page = await playground();
    await chooseAssistant(page, "agent");
    await send(page, "What is the weather in Paris?");
    await expect.poll(() => messages(page).textContent(), SOON).toContain("21°C");
    const call = messages(page).getByRole("region", { name: "Tool call get_weather" });
    expect(await call.textContent()).toContain('{"city":"Paris"}');
    expect(await call.textContent()).toContain("It is 21°C and sunny in Paris.");
    await expect
      .poll(() => messages(page).textContent(), SOON)
      .toContain("Here is the weather: It is 21°C and sunny in Paris.");
    await runEnded(page);
    // The answer came through the messages-tuple stream, not only the final values.
    const status = await page.getByRole("status").textContent();
    expect(Number(/(\d+) message chunks streamed/.exec(status ?? "")?.[1])).toBeGreaterThan(0);
    await screenshot(page, "playground-chat");
    await noKeyIn(page);
  });

  it("streams agent_with_approval's answer word by word after an interrupt is approved", async () => {
    const page = await playground();
    await chooseAssistant(page, "agent_with_approval");
    await send(page, "What is the weather in Paris?");
    const interrupt = page.getByRole("region", { name: "Interrupt" });
    await interrupt.waitFor(SOON);
    expect(await interrupt.textContent()).toContain("get_weather");
    for (const name of ["Approve", "Edit", "Reject"]) await interrupt.getByRole("button", { name }).waitFor();
    await screenshot(page, "playground-interrupt");
    // Every text the answer showed on its way: more than a couple mean it arrived in steps.
    await page.evaluate(`(() => {
      window.__answers = [];
      const log = document.querySelector('[role="log"][aria-label="Messages"]');
      new MutationObserver(() => {
        const texts = log.querySelectorAll(".pg-ai .pg-text");
        const last = texts[texts.length - 1];
        if (last) window.__answers.push(last.textContent);
      }).observe(log, { subtree: true, childList: true, characterData: true });
    })()`);
    await interrupt.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => messages(page).textContent(), SOON)
      .toContain("Here is the weather: It is 21°C and sunny in Paris.");
    await runEnded(page);
    await expect.poll(() => interrupt.count(), SOON).toBe(0);
    const seen = (await page.evaluate("window.__answers")) as string[];
    const steps = new Set(
      seen.filter((t) => "Here is the weather: It is 21°C and sunny in Paris.".startsWith(t)),
    );
    expect(steps.size).toBeGreaterThan(3);
    await noKeyIn(page);
  });

  it("resumes an interrupt with an edited city, and with a rejection, each in a new thread", async () => {
    const page = await playground();
    await chooseAssistant(page, "agent_with_approval");
    await send(page, "What is the weather in Oslo?");
    const interrupt = page.getByRole("region", { name: "Interrupt" });
    await interrupt.waitFor(SOON);
    expect(await interrupt.textContent()).toContain('{"city":"Oslo"}');
    await interrupt.getByRole("button", { name: "Edit" }).click();
    await interrupt.getByLabel("city").fill("Rome");
    await interrupt.getByRole("button", { name: "Resume with edits" }).click();
    await expect.poll(() => messages(page).textContent(), SOON).toContain("It is 21°C and sunny in Rome.");
    await runEnded(page);
    expect(
      await messages(page).getByRole("region", { name: "Tool call get_weather" }).textContent(),
    ).toContain('{"city":"Rome"}');

    // The thread's history: an earlier checkpoint holds the question but not yet the answer.
    await page.getByRole("button", { name: "History" }).click();
    const history = page.getByRole("region", { name: "History" });
    const first = history.getByRole("button", { name: /^Checkpoint 1\b/ });
    await first.click();
    const earlier = history.getByRole("log", { name: "Checkpoint messages" });
    await expect.poll(() => earlier.textContent(), SOON).toContain("What is the weather in Oslo?");
    expect(await earlier.textContent()).not.toContain("sunny");
    expect(await history.getByRole("button").count()).toBeGreaterThan(3);
    await screenshot(page, "playground-history");

    await page.getByRole("button", { name: "New thread" }).click();
    await expect.poll(() => messages(page).textContent(), SOON).toContain("No messages yet.");
    await send(page, "What is the weather in Oslo?");
    await interrupt.waitFor(SOON);
    await interrupt.getByRole("button", { name: "Reject" }).click();
    await expect
      .poll(() => messages(page).textContent(), SOON)
      .toContain("OK, I did not look up the weather.");
    await runEnded(page);
    expect(await messages(page).textContent()).not.toContain("sunny");
    // Both threads are there to pick again.
    const threads = await page.getByLabel("Thread").locator("option").count();
    expect(threads).toBeGreaterThanOrEqual(3);
    await noKeyIn(page);
  });

  it("fits a phone's width", async () => {
    const page = await playground(390);
    await chooseAssistant(page, "agent_with_approval");
    const thread = page.getByLabel("Thread");
    await expect.poll(() => thread.locator("option").count(), SOON).toBeGreaterThan(1);
    await thread.selectOption({ index: 1 });
    await expect.poll(() => messages(page).textContent(), SOON).toContain("weather");
    await page.getByRole("button", { name: "History" }).click();
    await page.getByRole("region", { name: "History" }).getByRole("button").first().waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "playground-phone");
    await noKeyIn(page);
  });
});
