import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import puppeteer, { type Page } from "puppeteer-core";
import { chromiumPath } from "../harness/chromium.ts";
import { startPlatform } from "../harness/platform.ts";
import { buildConsole, CONSOLE_DIST } from "../infra/console/build.mjs";

// npm run bench -- console: the web console's bundle (gzipped: the first load — app.js, the chunks it imports
// statically, app.css, index.html — and the lazily loaded studio chunks) against the issue 37 budgets, then
// Lighthouse (desktop preset, against the machine's Chromium) on the traces list, a trace, the studio's graph
// view and a thread's timeline, served by a platform running examples/agent as its `--graph` deployment.
const FIRST_LOAD_BUDGET = 150 * 1024;
const STUDIO_BUDGET = 300 * 1024;
const TARGETS = { accessibility: 95, performance: 90 };

const gz = (file: string) => gzipSync(readFileSync(join(CONSOLE_DIST, file)), { level: 9 }).length;
const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;

/** The files a module pulls in by static `import … from "./x.js"`, transitively. */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>([entry]);
  for (const file of seen) {
    const text = readFileSync(join(CONSOLE_DIST, file), "utf8");
    for (const m of text.matchAll(/(?:^|[;}\n])\s*import\s*(?:[^"'()]*?from\s*)?["']\.\/([\w-]+\.js)["']/g))
      seen.add(m[1]!);
  }
  return [...seen];
}

export function bundleSizes() {
  const js = readdirSync(CONSOLE_DIST).filter((f) => f.endsWith(".js"));
  const first = [...staticClosure("app.js"), "app.css", "index.html"];
  const lazy = js.filter((f) => !first.includes(f));
  const firstLoad = first.reduce((n, f) => n + gz(f), 0);
  const studio = lazy.reduce((n, f) => n + gz(f), 0);
  return { first, lazy, firstLoad, studio };
}

async function signIn(page: Page, base: string, apiKey: string, tenantId: string) {
  await page.goto(base);
  await page.locator("#root input").wait();
  const session = JSON.stringify(JSON.stringify({ apiKey, tenantId }));
  await page.evaluate(`sessionStorage.setItem("console.session", ${session})`);
}

async function audit(page: Page, url: string, ready: string) {
  // The page's data arrives after load (API calls): Lighthouse waits for the network to be quiet.
  const result = await lighthouse(
    url,
    { disableStorageReset: true, onlyCategories: ["accessibility", "performance"], logLevel: "error" },
    desktopConfig,
    page,
  );
  const categories = result?.lhr.categories ?? {};
  const score = (k: string) => Math.round((categories[k]?.score ?? 0) * 100);
  const failed = Object.values(result?.lhr.audits ?? {})
    .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode === "binary")
    .map((a) => a.id);
  await page.waitForSelector(ready, { timeout: 30_000 }).catch(() => undefined);
  return { accessibility: score("accessibility"), performance: score("performance"), failed };
}

export async function consoleBench() {
  await buildConsole({ force: true });
  const sizes = bundleSizes();
  console.log("console bundle (gzipped)");
  console.log(
    `  first load  ${kb(sizes.firstLoad).padStart(9)}  budget ${kb(FIRST_LOAD_BUDGET)}  ${sizes.firstLoad <= FIRST_LOAD_BUDGET ? "ok" : "OVER"}  (${sizes.first.join(", ")})`,
  );
  console.log(
    `  studio      ${kb(sizes.studio).padStart(9)}  budget ${kb(STUDIO_BUDGET)}  ${sizes.studio <= STUDIO_BUDGET ? "ok" : "OVER"}  (${sizes.lazy.join(", ")})`,
  );

  const platform = await startPlatform({}, { args: ["--graph", "examples/agent/langgraph.json"] });
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  try {
    const { base_url: base, api_key: apiKey, tenant_id: tenantId } = platform.facts;
    const h = { "X-Api-Key": apiKey, "X-Tenant-Id": tenantId, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(base + path, { method: "POST", headers: h, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<any>;
    };
    // Data to show: a trace (ingested as the SDKs do) and a thread of the example agent with a run.
    const traceId = crypto.randomUUID();
    const now = Date.now();
    await post("/api/v1/runs", {
      id: traceId,
      name: "bench-trace",
      run_type: "chain",
      start_time: now - 1000,
      end_time: now,
      inputs: { question: "weather in Paris?" },
      outputs: { answer: "sunny" },
      session_name: "console-bench",
    });
    let projectId: string | undefined;
    for (let i = 0; i < 50 && !projectId; i++) {
      const r = await fetch(`${base}/api/v1/sessions?name=console-bench`, { headers: h });
      projectId = ((await r.json()) as { id: string }[])[0]?.id;
      if (!projectId) await new Promise((r) => setTimeout(r, 200));
    }
    const agents = `/agents/local`;
    let assistant: { assistant_id: string } | undefined;
    // `--graph` builds and deploys the folder as a revision: its first build installs the lockfile.
    for (let i = 0; i < 400 && !assistant; i++) {
      assistant = await post(`${agents}/assistants/search`, { graph_id: "agent" })
        .then((l) => l[0])
        .catch(() => undefined);
      if (!assistant) await new Promise((r) => setTimeout(r, 500));
    }
    if (!assistant) throw new Error("the example agent's assistant did not appear");
    const thread = await post(`${agents}/threads`, { metadata: { graph_id: "agent" } });
    await post(`${agents}/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: assistant.assistant_id,
      input: { messages: [{ role: "user", content: "What is the weather in Paris?" }] },
    });

    const page = await browser.newPage();
    await signIn(page, base, apiKey, tenantId);
    const pages: [string, string, string][] = [
      ["traces list", `${base}/#/traces`, "table"],
      ["a trace", `${base}/#/traces/${projectId}/trace/${traceId}`, "main h1"],
      ["studio graph", `${base}/#/studio/local/${assistant.assistant_id}`, ".react-flow__node"],
      ["thread timeline", `${base}/#/studio/local/${assistant.assistant_id}/${thread.thread_id}`, ".tl-step"],
    ];
    console.log("Lighthouse (desktop preset)   accessibility  performance  (targets ≥ 95, ≥ 90)");
    for (const [name, url, ready] of pages) {
      const s = await audit(page, url, ready);
      const ok = s.accessibility >= TARGETS.accessibility && s.performance >= TARGETS.performance;
      console.log(
        `  ${name.padEnd(28)} ${String(s.accessibility).padStart(13)}  ${String(s.performance).padStart(11)}  ${ok ? "ok" : "BELOW"}${s.failed.length ? `  failed audits: ${s.failed.join(", ")}` : ""}`,
      );
    }
  } finally {
    await browser.close();
    await platform.stop();
  }
}
