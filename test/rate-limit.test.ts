import { Client, RunTree } from "langsmith";
import { describe, expect, it } from "vitest";
import { newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { type AddCount, blockOf, FLUSH_MS, WindowCounter, windowAt } from "../shared/auth/window-counter.ts";
import { getItem } from "../shared/aws/ddb.ts";
import { addRequests, tenants } from "../shared/records/identity.ts";
import { auth, base, call } from "./helpers/cloud.ts";

// Per-workspace rate limits (issue 25): requests a workspace sends beyond its limit answer 429 with Retry-After
// and the platform's error shape, on every authenticated API (control plane, ingestion, bulk export, agent
// servers); other workspaces are not affected; after Retry-After seconds the workspace's requests pass again;
// and the langsmith SDK retries through the 429. Each test makes a workspace with a low limit of its own on its
// record (1 request/s, a burst of 5: windows of 5 s), so the shared local cloud's other workspaces keep theirs.
const BURST = 5;
const WINDOW_MS = 5000;

async function limitedWorkspace() {
  const tenant = newTenantId();
  const key = newApiKey();
  await tenants.put({
    id: tenant,
    name: "rate limited",
    created_at: new Date().toISOString(),
    rate_limit: 1,
    rate_burst: BURST,
  });
  await storeApiKey(key, [tenant]);
  return { "X-Api-Key": key };
}

/** Waits for the start of a window (windows are aligned to the clock the platform shares), so all fit in one. */
async function freshWindow() {
  const { retryAfterSeconds, start } = windowAt(Date.now(), WINDOW_MS);
  const wait = start + WINDOW_MS - Date.now() + 50;
  if (retryAfterSeconds <= 4) await new Promise((r) => setTimeout(r, wait));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("per-workspace rate limit", () => {
  it("beyond its limit a workspace gets 429 with Retry-After on every API; others pass; after Retry-After it passes", async () => {
    const limited = await limitedWorkspace();
    const agent = `/agents/${crypto.randomUUID()}/threads/search`;
    // The functions the window's requests reach are warmed first (by the file's own workspace): a cold start of each
    // on a busy machine could carry the requests past the end of one window.
    for (const [method, path] of [
      ["GET", "/v2/deployments"],
      ["GET", "/api/v1/sessions"],
      ["GET", "/api/v1/bulk-exports"],
      ["POST", agent],
      ["GET", `/api/v1/sessions/${crypto.randomUUID()}`],
      ["POST", "/api/v1/sessions"],
    ])
      await call(method, path, { headers: auth, body: method === "POST" ? {} : undefined });
    await freshWindow();
    // One window's worth, across the control plane, ingestion, bulk export and an agent server.
    const within = [
      await call("GET", "/v2/deployments", { headers: limited }),
      await call("GET", "/api/v1/sessions", { headers: limited }),
      await call("GET", "/api/v1/bulk-exports", { headers: limited }),
      await call("POST", agent, { headers: limited, body: {} }),
      await call("GET", "/api/v1/sessions", { headers: limited }),
    ];
    expect(within.map((r) => r.status)).toEqual([200, 200, 200, 404, 200]);
    // Each API function counts in its own environments (as Lambda's), which share the window's record: a count
    // reaches it within the flush interval, and an environment that has not heard of it since asks it first.
    await sleep(2 * FLUSH_MS);

    const refusedProject = `refused-${crypto.randomUUID()}`;
    const over = [
      await call("GET", "/api/v1/sessions", { headers: limited }),
      // A read whose handler fails answers the 429 too; a write is refused before its handler runs.
      await call("GET", `/api/v1/sessions/${crypto.randomUUID()}`, { headers: limited }),
      await call("POST", "/api/v1/sessions", { headers: limited, body: { name: refusedProject } }),
      await call("GET", "/v2/deployments", { headers: limited }),
      await call("GET", "/api/v1/bulk-exports", { headers: limited }),
      await call("POST", agent, { headers: limited, body: {} }),
    ];
    for (const r of over) {
      expect(r.status).toBe(429);
      expect(r.headers.get("content-type")).toMatch(/application\/json/);
      expect(r.json).toEqual({ detail: expect.stringMatching(/rate limit/i) });
      const retryAfter = r.headers.get("retry-after");
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(WINDOW_MS / 1000);
    }
    // A browser's 429 carries the CORS headers, so the page can read it and its Retry-After.
    const browser = await call("GET", "/api/v1/sessions", {
      headers: { ...limited, Origin: "https://app.example" },
    });
    expect(browser.status).toBe(429);
    expect(browser.headers.get("access-control-allow-origin")).toBeTruthy();
    expect(browser.headers.get("access-control-expose-headers")?.split(",")).toContain("retry-after");

    // Another workspace (the file's own, default limit) is not held back meanwhile.
    expect((await call("GET", "/api/v1/sessions", { headers: auth })).status).toBe(200);

    const last = await call("GET", "/api/v1/sessions", { headers: limited });
    expect(last.status).toBe(429);
    await sleep(Number(last.headers.get("retry-after")) * 1000);
    expect((await call("GET", "/api/v1/sessions", { headers: limited })).status).toBe(200);
    expect((await call("POST", agent, { headers: limited, body: {} })).status).toBe(404);
    const found = await call("GET", `/api/v1/sessions?name=${refusedProject}`, { headers: limited });
    expect(found.status).toBe(200);
    expect(found.json).toEqual([]);
  });

  it("the langsmith SDK retries its trace batch through a 429 and the run is stored", async () => {
    const limited = await limitedWorkspace();
    const seen: { method: string; path: string; status: number }[] = [];
    const client = new Client({
      apiUrl: `${base}/api/v1`,
      apiKey: limited["X-Api-Key"],
      autoBatchTracing: true,
      fetchImplementation: async (input: string | URL | Request, init?: RequestInit) => {
        const res = await fetch(input, init);
        const url = new URL(input instanceof Request ? input.url : input);
        seen.push({ method: init?.method ?? "GET", path: url.pathname, status: res.status });
        return res;
      },
    });
    await freshWindow();
    for (let i = 0; i < BURST; i++)
      expect((await call("GET", "/api/v1/sessions", { headers: limited })).status).toBe(200);

    const run = new RunTree({
      name: "limited",
      run_type: "chain",
      inputs: { q: 1 },
      client,
      project_name: `rate-limit-${crypto.randomUUID()}`,
    });
    await run.postRun();
    await run.end({ a: 1 });
    await run.patchRun();
    await client.awaitPendingTraceBatches();

    const ingest = seen.filter((s) => s.method === "POST" && /\/runs\/(multipart|batch)$/.test(s.path));
    expect(ingest[0]?.status).toBe(429);
    expect(ingest.at(-1)?.status).toBeLessThan(300);
    const stored = await call("GET", `/api/v1/runs/${run.id}`, { headers: limited });
    expect(stored.status).toBe(200);
    expect(stored.json.outputs).toEqual({ a: 1 });
  });
});

describe("two processes sharing a workspace's window", () => {
  it("together stop at the limit, overshooting by at most their unflushed blocks; the record counts every request once", async () => {
    const tenant = newTenantId();
    const window = { limit: 200, ms: 3_600_000 };
    const block = blockOf(window.limit);
    const underway = new Set<Promise<number>>();
    const add: AddCount = (...args) => {
      const p = addRequests(...args);
      underway.add(p);
      p.finally(() => underway.delete(p)).catch(() => {});
      return p;
    };
    const processes = [new WindowCounter(add), new WindowCounter(add)];
    const now = Date.now();
    const admitted = [0, 0];
    // Requests arrive in turns of 3 per process, each turn after the UpdateItems under way (a block's) answered.
    for (let turn = 0; turn < 150; turn++) {
      for (const [i, p] of processes.entries())
        for (let r = 0; r < 3; r++) if (p.decide(tenant, window, now).admitted) admitted[i]!++;
      await Promise.allSettled([...underway]);
    }
    await Promise.all(processes.map((p) => p.flushed()));
    const total = admitted[0]! + admitted[1]!;
    expect(total).toBeGreaterThanOrEqual(window.limit);
    expect(total).toBeLessThanOrEqual(window.limit + 2 * block);
    // Both took part: neither stopped on its own count alone.
    expect(Math.min(...admitted)).toBeGreaterThan(window.limit / 4);
    const start = windowAt(now, window.ms).start;
    const record = await getItem<{ n: number }>("main", { PK: `RATE#${tenant}`, SK: String(start) }, true);
    expect(record?.n).toBe(total);
  });
});
