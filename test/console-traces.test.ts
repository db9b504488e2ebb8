import { deflateSync } from "node:zlib";
import { Client, RunTree } from "langsmith";
import { getCurrentRunTree, traceable } from "langsmith/traceable";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace } from "../harness/export.ts";
import { consolePage, launchBrowser, screenshot } from "./helpers/browser.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// The console's traces (issue 18, item 1) in Chromium, on data sent by the real langsmith SDK: a project's
// charts and their numbers, its runs filtered with the filter language (and a bad filter's positioned error),
// a trace's tree on a timeline, an llm run's messages (roles, text, tool call args beside their result, an
// image), tokens, cost, time to first token and feedback; at 1280 and 390 px; no API key in the page.
const client = new Client({
  apiUrl: `${facts.base_url}/api/v1`,
  apiKey: facts.api_key,
  autoBatchTracing: true,
});
const getRun = async (id: string) => (await call("GET", `/api/v1/runs/${id}`, { headers: auth })).json;
const project = `console-traces-${Date.now()}`;
/** A 96×48 PNG (a colour gradient), base64: the image block the llm run's user message carries. */
function png(w = 96, h = 48) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) rows.set([(x * 255) / w, (y * 255) / h, 200], y * (w * 3 + 1) + 1 + x * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]).toString("base64");
}
const PNG = png();
const ids: Record<string, string> = {};
let projectId = "";
let browser: Browser;

/** Polls `read` until `ok` holds (expect.poll is for tests only, this runs in beforeAll). */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function sendTraces() {
  const opts = { client, tracingEnabled: true, project_name: project };
  const weather = traceable(
    async (args: { city: string }) => ({ forecast: `18°C and sunny in ${args.city}` }),
    {
      ...opts,
      name: "get_weather",
      run_type: "tool",
      // A file sent with the run (an attachment part): the run page shows it.
      extractAttachments: (args: { city: string }) => [
        { map: ["image/png", Buffer.from(PNG, "base64")] },
        args,
      ],
    },
  );
  const chat = traceable(
    async (_: { messages: unknown[]; model: string }) => {
      const rt = getCurrentRunTree();
      ids.llm = rt.id;
      rt.events = [
        { name: "new_token", time: new Date(Date.now() + 20).toISOString(), kwargs: { token: "It" } },
      ];
      await new Promise((r) => setTimeout(r, 60));
      return {
        choices: [{ message: { role: "assistant", content: "It is 18°C and sunny in Paris." } }],
        usage: { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50 },
        model: "gpt-4o-mini",
      };
    },
    {
      ...opts,
      name: "ChatModel",
      run_type: "llm",
      metadata: { ls_model_name: "gpt-4o-mini", ls_provider: "openai" },
    },
  );
  const agent = traceable(
    async (question: string) => {
      ids.root = getCurrentRunTree().id;
      const result = await weather({ city: "Paris" });
      return chat({
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "You are a weather assistant." },
          {
            role: "user",
            content: [
              { type: "text", text: question },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: JSON.stringify(result) },
        ],
      });
    },
    { ...opts, name: "Agent", run_type: "chain" },
  );
  const failing = traceable(
    async () => {
      ids.failing = getCurrentRunTree().id;
      throw new Error("upstream timed out");
    },
    { ...opts, name: "Failing step", run_type: "chain" },
  );
  await agent("What is the weather in Paris? Here is a photo.");
  await failing().catch(() => {});
  await client.awaitPendingTraceBatches();
  await until(
    async () => (await getRun(ids.llm))?.status,
    (s) => s === "success",
    "the llm run",
  );
  await until(
    async () => (await getRun(ids.failing))?.status,
    (s) => s === "error",
    "the failing run",
  );
  await sendOddRun();
  projectId = (await getRun(ids.root)).session_id;
  await client.createFeedback(ids.llm, "correctness", {
    score: 1,
    comment: "Right answer",
    sessionId: projectId,
  });
  await client.awaitPendingTraceBatches();
  await until(
    async () => (await getRun(ids.llm)).feedback_stats,
    (s) => !!s,
    "feedback stats",
  );
}

/** An llm run in the platform format with reasoning, a server tool call, file and audio blocks, and an
 * output message whose role is unknown (so the run has format_errors), in a project of its own. */
async function sendOddRun() {
  const rt = new RunTree({
    name: "Odd model",
    run_type: "llm",
    client,
    project_name: `${project}-odd`,
    inputs: {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Search the web and read this." },
            { type: "file", id: "file-123", mime_type: "application/pdf" },
            {
              type: "audio",
              base64: "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=",
              mime_type: "audio/wav",
            },
            { type: "image", url: "javascript:alert(1)" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "I should search first." },
            { type: "server_tool_call", id: "srv_1", name: "web_search", args: { query: "weather Paris" } },
            {
              type: "server_tool_result",
              tool_call_id: "srv_1",
              status: "success",
              output: { hits: ["meteo.fr"] },
            },
          ],
        },
      ],
    },
  });
  await rt.postRun();
  await rt.end({ messages: [{ role: "robot", content: "beep" }] });
  await rt.patchRun();
  ids.odd = rt.id;
  ids.oddTrace = rt.trace_id;
  await client.awaitPendingTraceBatches();
  await until(
    async () => (await getRun(ids.odd))?.status,
    (s) => s === "success",
    "the odd run",
  );
  ids.oddProject = (await getRun(ids.odd)).session_id;
}

beforeAll(async () => {
  browser = await launchBrowser();
  await sendTraces();
});
afterAll(async () => {
  await browser?.close();
});

const goto = (page: Page, hash: string) => page.goto(`${facts.base_url}/${hash}`);
const noKey = async (page: Page) => expect(await page.content()).not.toContain(facts.api_key);
const sumColumn = async (page: Page, table: string) => {
  const cells = await page
    .getByRole("table", { name: table })
    .locator("tbody tr td:nth-child(2)")
    .allTextContents();
  return cells.reduce((n, c) => n + (Number(c.replace(/,/g, "")) || 0), 0);
};

describe("console traces", () => {
  it("projects: run counts and a project's charts with their numbers (runs, error rate, latency, tokens, cost)", async () => {
    const page = await consolePage(browser);
    await goto(page, "#/traces");
    const table = page.getByRole("table", { name: "Tracing projects" });
    const row = table
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: project, exact: true }) });
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("4");
    await row.getByRole("button", { name: `Charts of ${project}`, exact: true }).click();
    await page.getByRole("heading", { name: `Charts: ${project}` }).waitFor();
    const runs = page.getByRole("figure", { name: "Runs" });
    await expect.poll(() => runs.locator("figcaption").textContent()).toBe("4 runs");
    expect(await sumColumn(page, "Runs per bin")).toBe(4);
    expect(await page.getByRole("figure", { name: "Error rate" }).locator("figcaption").textContent()).toBe(
      "25.0% errors (1 of 4 runs)",
    );
    expect(
      await page.getByRole("figure", { name: "Latency p50" }).locator("figcaption").textContent(),
    ).toMatch(/^p50 latency \d/);
    expect(
      await page.getByRole("figure", { name: "Latency p99" }).locator("figcaption").textContent(),
    ).toMatch(/^p99 latency \d/);
    expect(await page.getByRole("figure", { name: "Tokens" }).locator("figcaption").textContent()).toBe(
      "50 tokens (llm runs)",
    );
    expect(await sumColumn(page, "Tokens per bin")).toBe(50);
    expect(await page.getByRole("figure", { name: "Cost" }).locator("figcaption").textContent()).toMatch(
      /^\$0\.\d+ cost \(llm runs\)$/,
    );
    expect(await page.getByRole("status", { name: "Runs read" }).textContent()).toContain("4 runs read");
    // The range can be changed: the last 7 days, binned per day, still hold the 4 runs.
    await page.getByLabel("Range").selectOption("7d");
    await expect.poll(() => runs.locator("figcaption").textContent()).toBe("4 runs");
    expect(await page.getByRole("status", { name: "Runs read" }).textContent()).toContain("per day");
    await screenshot(page, "traces-projects");
    await noKey(page);
  });

  it("projects: found by name, and paged when there are more than a page of them", async () => {
    // A workspace of its own: 51 new projects would push this file's project off the shared one's first page.
    const ws = await newWorkspace();
    const tag = `find-${crypto.randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 51; i++) {
      const r = await call("POST", "/api/v1/sessions", {
        headers: ws.headers,
        body: { name: `${tag}-${i}` },
      });
      expect(r.status, r.text).toBe(200);
    }
    await call("POST", "/api/v1/sessions", { headers: ws.headers, body: { name: "unrelated" } });
    const page = await consolePage(browser, { apiKey: ws.headers["X-Api-Key"], tenantId: ws.tenant });
    await goto(page, "#/traces");
    await page.getByLabel("Name contains").fill(tag);
    await page.getByRole("button", { name: "Find", exact: true }).click();
    const rows = page.getByRole("table", { name: "Tracing projects" }).locator("tbody tr");
    const names = async () =>
      (await rows.getByRole("link").allTextContents()).filter((n) => n.startsWith(tag));
    // The unfiltered first page has 50 rows too (49 of these and "unrelated"): wait for the found ones.
    await expect.poll(async () => (await names()).length, { timeout: 15_000 }).toBe(50);
    expect(await rows.count()).toBe(50);
    const first = await names();
    const pages = page.getByRole("navigation", { name: "Project pages" });
    await pages.getByRole("button", { name: "Older projects" }).click();
    // The oldest one is alone on the second page: together the pages hold each project once. (Wait for its
    // project's row, not for one row: the table's loading row is one row too.)
    await expect.poll(async () => (await names()).length, { timeout: 15_000 }).toBe(1);
    expect(await rows.count()).toBe(1);
    expect(new Set([...first, ...(await names())]).size).toBe(51);
    expect(await pages.getByRole("button", { name: "Older projects" }).isDisabled()).toBe(true);
    await pages.getByRole("button", { name: "Newer projects" }).click();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(50);
    // A name no project has.
    await page.getByLabel("Name contains").fill(`${tag}-none`);
    await page.getByRole("button", { name: "Find", exact: true }).click();
    await page.getByText("No project has that in its name.").waitFor();
    expect(await page.content()).not.toContain(ws.headers["X-Api-Key"]);
  });

  it("a project's runs: newest first, filtered with the filter language; a bad filter shows the position of its error", async () => {
    const page = await consolePage(browser);
    await goto(page, `#/traces/${projectId}`);
    await page.getByRole("heading", { name: `Runs: ${project}` }).waitFor();
    const rows = page.getByRole("table", { name: "Runs" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(4);
    // Newest first: the failing step ran last.
    expect(await rows.first().getByRole("link").textContent()).toBe("Failing step");
    await page.getByLabel("Filter", { exact: true }).fill('and(eq(run_type, "llm"), gt(total_tokens, 10))');
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getByRole("link").textContent()).toBe("ChatModel");
    await screenshot(page, "traces-runs");
    await page.getByLabel("Filter", { exact: true }).fill('and(eq(run_type, "llm")');
    await page.getByRole("button", { name: "Apply" }).click();
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toMatch(/position \d+/);
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => rows.count()).toBe(4);
    // The project's charts are one click away on its runs page too.
    await page.getByRole("button", { name: "Show charts" }).click();
    await expect
      .poll(() => page.getByRole("figure", { name: "Runs" }).locator("figcaption").textContent())
      .toBe("4 runs");
    await noKey(page);
  });

  it("a trace: its runs as a tree in dotted order on a timeline; clicking a run opens it", async () => {
    const page = await consolePage(browser);
    await goto(page, `#/traces/${projectId}`);
    await page.getByRole("link", { name: "Agent", exact: true }).click();
    await page.getByRole("heading", { name: "Trace: Agent" }).waitFor();
    const tree = page.getByRole("list", { name: "Trace tree" });
    const links = tree.getByRole("link");
    await expect.poll(() => links.count()).toBe(3);
    const names = await links.evaluateAll((as) =>
      as.map((a) => a.getAttribute("aria-label")?.split(" (")[0]),
    );
    expect(names).toEqual(["Agent", "get_weather", "ChatModel"]);
    // The children sit in the root's nested list.
    expect(await tree.locator(":scope > li > ul > li").count()).toBe(2);
    expect(await tree.locator(".trace-bar").count()).toBe(3);
    await page.getByRole("heading", { name: "Agent", exact: true }).waitFor();
    await page.getByRole("link", { name: /^get_weather \(tool, success/ }).click();
    await page.getByRole("heading", { name: "get_weather", exact: true }).waitFor();
    expect(await page.getByRole("region", { name: "Outputs" }).textContent()).toContain(
      "18°C and sunny in Paris",
    );
    // Its attachment: named, typed, the image loaded from its presigned URL.
    const files = page.getByRole("region", { name: "Attachments" });
    expect(await files.textContent()).toContain("map image/png");
    const image = files.getByRole("img", { name: "Attachment map" });
    await expect
      .poll(() => image.evaluate((i) => (i as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(96);
    await screenshot(page, "traces-trace");
    await noKey(page);
  });

  it("an llm run: messages (roles, text, tool call args beside its result, an image), tokens, cost, time to first token, feedback", async () => {
    const page = await consolePage(browser);
    await goto(page, `#/traces/${projectId}/trace/${ids.root}`);
    await page.getByRole("link", { name: /^ChatModel \(llm/ }).click();
    await page.getByRole("heading", { name: "ChatModel", exact: true }).waitFor();
    await checkLlmRun(page);
    await screenshot(page, "traces-llm-run");
    await noKey(page);
  });

  it("an llm run that did not conform shows its format_errors; reasoning, server tool calls, audio and references render; unsafe URLs are not loaded", async () => {
    const page = await consolePage(browser);
    await goto(page, `#/traces/${ids.oddProject}/trace/${ids.oddTrace}/${ids.odd}`);
    await page.getByRole("heading", { name: "Odd model", exact: true }).waitFor();
    await expect
      .poll(() => page.getByRole("region", { name: "Format errors" }).textContent())
      .toContain('unknown message role "robot"');
    const user = page.getByRole("article", { name: "user message" });
    expect(await user.getByRole("region", { name: "file reference" }).textContent()).toContain("id file-123");
    expect(await user.locator("audio").getAttribute("src")).toMatch(/^data:audio\/wav;base64,UklGR/);
    // A javascript: URL is never loaded: the image is shown as a reference only.
    expect(await user.getByRole("img").count()).toBe(0);
    expect(await user.getByRole("region", { name: "image reference" }).textContent()).toContain(
      "URL not shown",
    );
    const assistant = page.getByRole("article", { name: "assistant message" });
    expect(await assistant.locator("details.reasoning").textContent()).toContain("I should search first.");
    const server = assistant.getByRole("region", { name: "Server tool call web_search" });
    expect(await server.locator(".tool-args").textContent()).toContain('"query": "weather Paris"');
    expect(await server.locator(".tool-result").textContent()).toContain("meteo.fr");
    await screenshot(page, "traces-llm-run-format-errors");
    await noKey(page);
  });

  it("works at a phone's width (390 px)", async () => {
    const page = await consolePage(browser, { width: 390 });
    const fits = async () =>
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await goto(page, "#/traces");
    await page.getByRole("button", { name: `Charts of ${project}`, exact: true }).click();
    await expect
      .poll(() => page.getByRole("figure", { name: "Runs" }).locator("figcaption").textContent())
      .toBe("4 runs");
    await fits();
    await screenshot(page, "traces-projects-phone");
    await goto(page, `#/traces/${projectId}`);
    await expect.poll(() => page.getByRole("table", { name: "Runs" }).locator("tbody tr").count()).toBe(4);
    await fits();
    await screenshot(page, "traces-runs-phone");
    await goto(page, `#/traces/${projectId}/trace/${ids.root}`);
    await page.getByRole("heading", { name: "Agent", exact: true }).waitFor();
    await fits();
    await screenshot(page, "traces-trace-phone");
    await goto(page, `#/traces/${projectId}/trace/${ids.root}/${ids.llm}`);
    await page.getByRole("heading", { name: "ChatModel", exact: true }).waitFor();
    await checkLlmRun(page);
    await fits();
    await screenshot(page, "traces-llm-run-phone");
    await noKey(page);
  });
});

async function checkLlmRun(page: Page) {
  const fact = (name: string) =>
    page
      .locator("dl.facts > div")
      .filter({ has: page.getByText(name, { exact: true }) })
      .locator("dd");
  await expect.poll(() => fact("Prompt tokens").textContent()).toBe("42");
  expect(await fact("Completion tokens").textContent()).toBe("8");
  expect(await fact("Total tokens").textContent()).toBe("50");
  expect(await fact("Cost").textContent()).toMatch(/^\$0\.\d+/);
  expect(await fact("Time to first token").textContent()).toMatch(/^\d+(\.\d+)? m?s$/);
  const inputs = page.getByRole("list", { name: "Input messages" });
  await inputs
    .getByRole("article", { name: "system message" })
    .getByText("You are a weather assistant.")
    .waitFor();
  const user = inputs.getByRole("article", { name: "user message" });
  await user.getByText("What is the weather in Paris? Here is a photo.").waitFor();
  expect(await user.getByRole("img").getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
  const toolCall = page.getByRole("region", { name: "Tool call get_weather" });
  expect(await toolCall.locator(".tool-args").textContent()).toContain('"city": "Paris"');
  expect(await toolCall.locator(".tool-result").textContent()).toContain("18°C and sunny in Paris");
  const outputs = page.getByRole("list", { name: "Output messages" });
  await outputs
    .getByRole("article", { name: "assistant message" })
    .getByText("It is 18°C and sunny in Paris.")
    .waitFor();
  expect(await page.getByRole("region", { name: "Format errors" }).count()).toBe(0);
  const feedback = page.getByRole("table", { name: "Feedback list" });
  await feedback.getByRole("cell", { name: "correctness" }).waitFor();
  await feedback.getByRole("cell", { name: "Right answer" }).waitFor();
  expect(await page.getByRole("table", { name: "Feedback summary" }).textContent()).toContain("correctness");
}
