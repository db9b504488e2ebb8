import { Client } from "langsmith";
import { Client as Client09 } from "langsmith-0.9";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { base, call } from "./helpers/cloud.ts";

// The langsmith SDK's newer resources (client.runs / traces / threads, /api/v2) and the older listThreads /
// readThread, with the real SDK at 0.12 and 0.9, in a workspace of their own so every answer is known.
let headers: Record<string, string>;
let apiKey: string;
const sdks: [string, () => Client | Client09][] = [
  ["0.12", () => new Client({ apiUrl: `${base}/api/v1`, apiKey, autoBatchTracing: false })],
  ["0.9", () => new Client09({ apiUrl: `${base}/api/v1`, apiKey, autoBatchTracing: false })],
];
let client: Client;
let projectId: string;
const project = `v2-${crypto.randomUUID().slice(0, 8)}`;

// Six traces, a minute apart, each a chain root with an llm child: three in a thread named by `thread_id`,
// two by `session_id`, one by `conversation_id` (it failed), and one in no thread.
const T0 = Date.now() - 30 * 60_000;
interface Trace {
  root: string;
  llm: string;
  thread: string | null;
  start: number;
}
const traces: Trace[] = [];
const byThread = (t: string) => traces.filter((x) => x.thread === t);
const THREADS = [
  { id: `a-${crypto.randomUUID()}`, key: "thread_id", turns: 3 },
  { id: `b-${crypto.randomUUID()}`, key: "session_id", turns: 2 },
  { id: `c-${crypto.randomUUID()}`, key: "conversation_id", turns: 1 },
];
const dotted = (at: number, id: string) =>
  `${new Date(at).toISOString().replace(/[-:.]/g, "").slice(0, -1)}000Z${id}`;

async function postTrace(i: number, thread: { id: string; key: string } | null, failed = false) {
  const t: Trace = {
    root: crypto.randomUUID(),
    llm: crypto.randomUUID(),
    thread: thread?.id ?? null,
    start: T0 + i * 60_000,
  };
  const metadata = thread ? { [thread.key]: thread.id } : {};
  const root = dotted(t.start, t.root);
  await client.createRun({
    id: t.root,
    name: `turn-${i}`,
    run_type: "chain",
    project_name: project,
    start_time: t.start,
    end_time: t.start + 1000 * (i + 1),
    trace_id: t.root,
    dotted_order: root,
    inputs: { question: `q${i}` },
    outputs: { answer: `a${i}` },
    extra: { metadata },
    ...(failed ? { error: `boom ${i}` } : {}),
  });
  await client.createRun({
    id: t.llm,
    name: "model",
    run_type: "llm",
    project_name: project,
    start_time: t.start + 10,
    end_time: t.start + 500,
    trace_id: t.root,
    parent_run_id: t.root,
    dotted_order: `${root}.${dotted(t.start + 10, t.llm)}`,
    inputs: { messages: [{ role: "user", content: `q${i}` }] },
    outputs: {
      choices: [{ message: { role: "assistant", content: `a${i}` } }],
      usage: { prompt_tokens: 10 + i, completion_tokens: 5, total_tokens: 15 + i },
    },
    extra: { metadata },
  });
  traces.push(t);
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

beforeAll(async () => {
  const tenant = newTenantId();
  apiKey = newApiKey();
  await ensureTenant(tenant, "v2 reads");
  await storeApiKey(apiKey, [tenant]);
  headers = { "X-Api-Key": apiKey };
  client = sdks[0][1]() as Client;
  let i = 0;
  for (const th of THREADS)
    for (let n = 0; n < th.turns; n++) await postTrace(i++, th, th.key === "conversation_id");
  await postTrace(i++, null);
  projectId = (await client.readProject({ projectName: project })).id;
}, 120_000);

afterEach(() => vi.restoreAllMocks());

const allRunIds = () => traces.flatMap((t) => [t.root, t.llm]).sort();

describe.each(sdks)("langsmith %s: client.runs", (_v, make) => {
  it("query: selects answer only the named fields, in the hosted forms", async () => {
    const c = make();
    const runs = await collect(
      c.runs.query({
        project_ids: [projectId],
        filter: 'eq(name, "turn-0")',
        selects: ["NAME", "RUN_TYPE", "STATUS", "THREAD_ID", "PROJECT_ID", "LATENCY_SECONDS", "METADATA"],
      }),
    );
    expect(runs).toEqual([
      {
        name: "turn-0",
        run_type: "CHAIN",
        status: "SUCCESS",
        thread_id: THREADS[0].id,
        project_id: projectId,
        latency_seconds: 1,
        metadata: { thread_id: THREADS[0].id },
      },
    ]);
  });

  it("query: pages through the cursor to the end, no run twice, none lost, newest first", async () => {
    const c = make();
    const runs = await collect(
      c.runs.query({ project_ids: [projectId], selects: ["ID", "START_TIME"], page_size: 3 }),
    );
    const ids = runs.map((r) => r.id!);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(allRunIds());
    const starts = runs.map((r) => r.start_time!);
    expect(starts).toEqual([...starts].sort().reverse());
  });

  it("query: filters as named (has_error, is_root, run_type, trace_id, ids)", async () => {
    const c = make();
    const ids = async (p: Record<string, unknown>) =>
      (await collect(c.runs.query({ project_ids: [projectId], selects: ["ID"], ...p } as never)))
        .map((r) => (r as { id: string }).id)
        .sort();
    expect(await ids({ has_error: true })).toEqual([byThread(THREADS[2].id)[0].root]);
    expect(await ids({ is_root: true })).toEqual(traces.map((t) => t.root).sort());
    expect(await ids({ run_type: "LLM" })).toEqual(traces.map((t) => t.llm).sort());
    expect(await ids({ trace_id: traces[1].root })).toEqual([traces[1].root, traces[1].llm].sort());
    expect(await ids({ ids: [traces[2].llm] })).toEqual([traces[2].llm]);
    // The window: before the traces, nothing.
    expect(await ids({ max_start_time: new Date(T0 - 1000).toISOString() })).toEqual([]);
  });

  it("retrieve: one run of its project; another project's id is a 404", async () => {
    const c = make();
    const run = await c.runs.retrieve(traces[0].llm, {
      project_id: projectId,
      selects: ["NAME", "TOTAL_TOKENS", "TRACE_ID", "IS_ROOT"],
    });
    expect(run).toEqual({ name: "model", total_tokens: 15, trace_id: traces[0].root, is_root: false });
    await expect(c.runs.retrieve(traces[0].llm, { project_id: crypto.randomUUID() })).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe.each(sdks)("langsmith %s: client.traces", (_v, make) => {
  it("query: root runs with trace-wide aggregates, paged to the end", async () => {
    const c = make();
    const items = await collect(
      c.traces.query({ project_id: projectId, selects: ["NAME", "TOTAL_TOKENS"], page_size: 2 }),
    );
    expect(items.map((t) => t.root_run?.name)).toEqual(traces.map((_, i) => `turn-${i}`).reverse());
    for (const [i, t] of items.reverse().entries())
      expect(t.trace_aggregates).toEqual({ total_tokens: 15 + i });
  });

  it("query: trace_filter on the root, tree_filter on any run of the trace", async () => {
    const c = make();
    const names = async (p: Record<string, unknown>) =>
      (await collect(c.traces.query({ project_id: projectId, selects: ["NAME"], ...p } as never)))
        .map((t) => (t as { root_run: { name: string } }).root_run.name)
        .sort();
    expect(await names({ trace_filter: 'eq(status, "error")' })).toEqual(["turn-5"]);
    expect(await names({ tree_filter: "gte(total_tokens, 20)" })).toEqual(["turn-5", "turn-6"]);
  });

  it("listRuns: a trace's runs in start order", async () => {
    const c = make();
    const { items } = await c.traces.listRuns(traces[3].root, {
      project_id: projectId,
      selects: ["ID", "NAME", "PARENT_RUN_IDS"],
    });
    expect(items).toEqual([
      { id: traces[3].root, name: "turn-3", parent_run_ids: [] },
      { id: traces[3].llm, name: "model", parent_run_ids: [traces[3].root] },
    ]);
    // Another project's (or workspace's) trace is a 404, not an empty list.
    await expect(
      c.traces.listRuns(traces[3].root, { project_id: crypto.randomUUID() }),
    ).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe.each(sdks)("langsmith %s: client.threads", (_v, make) => {
  it("query: traces grouped by each of thread_id, session_id and conversation_id, most recent first", async () => {
    const c = make();
    const threads = await collect(c.threads.query({ project_id: projectId, page_size: 1 }));
    expect(threads.map((t) => t.thread_id)).toEqual(THREADS.map((t) => t.id).reverse());
    for (const th of THREADS) {
      const got = threads.find((t) => t.thread_id === th.id)!;
      const mine = byThread(th.id);
      expect(got).toMatchObject({
        count: th.turns,
        first_trace_id: mine[0].root,
        last_trace_id: mine[mine.length - 1].root,
        // Every run carrying the thread counts: the llm children's tokens.
        total_tokens: mine.reduce((n, t) => n + 15 + traces.indexOf(t), 0),
        num_errored_turns: th.key === "conversation_id" ? 1 : 0,
      });
    }
    const c3 = threads.find((t) => t.thread_id === THREADS[2].id)!;
    expect(c3.last_error).toBe("boom 5");
    expect(c3.first_inputs).toBe('{"question":"q5"}');
  });

  it("listTraces: a thread's traces in turn order, paged through the cursor", async () => {
    const c = make();
    const items = await collect(
      c.threads.listTraces(THREADS[0].id, {
        project_id: projectId,
        selects: ["NAME", "TURN_NUMBER", "TOTAL_TOKENS"],
        page_size: 2,
      } as never),
    );
    expect(items).toEqual(
      byThread(THREADS[0].id).map((t, i) => ({
        trace_id: t.root,
        name: `turn-${i}`,
        turn_number: i + 1,
        total_tokens: 15 + i,
      })),
    );
  });

  it("a thread no trace carries is a 404", async () => {
    const c = make();
    await expect(
      c.threads.listTraces("no-such-thread", { project_id: projectId }).then((p) => p.getPaginatedItems()),
    ).rejects.toMatchObject({ status: 404 });
  });

  it("listThreads and readThread (the older methods) read the same threads", async () => {
    const c = make();
    const threads = await c.listThreads({ projectId });
    expect(threads.map((t) => t.thread_id).sort()).toEqual(THREADS.map((t) => t.id).sort());
    const a = threads.find((t) => t.thread_id === THREADS[0].id)!;
    expect(a.runs.map((r) => r.id)).toEqual(byThread(THREADS[0].id).map((t) => t.root));
    const read = await collect(c.readThread({ threadId: THREADS[1].id, projectId }));
    expect(read.map((r) => r.id)).toEqual(byThread(THREADS[1].id).map((t) => t.root));
  });

  it("the SDK's version check accepts /info: no 'older than' warning", async () => {
    const warn = vi.spyOn(console, "warn");
    const c = make() as Client & { _ensureServerInfo(): Promise<unknown> };
    void c.runs;
    void c.threads;
    await c._ensureServerInfo();
    await new Promise((r) => setTimeout(r, 50));
    expect(warn.mock.calls.flat().join("\n")).not.toMatch(/older than/);
  });
});

describe("v1 run query: oldest first", () => {
  it('order: "asc" pages through the cursor oldest first, every run once', async () => {
    const seen: { id: string; start_time: string }[] = [];
    let cursor: string | null = null;
    do {
      const r = await call("POST", "/api/v1/runs/query", {
        headers,
        body: { session: [projectId], order: "asc", limit: 3, select: ["start_time"], cursor },
      });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.json.runs);
      cursor = r.json.cursors.next;
    } while (cursor);
    expect(seen.map((r) => r.id).sort()).toEqual(allRunIds());
    const starts = seen.map((r) => r.start_time);
    expect(starts).toEqual([...starts].sort());
  });
});

describe("refusals", () => {
  it("what is not served is a 422 that says why", async () => {
    const cases: [string, string, Record<string, unknown>, RegExp][] = [
      ["/api/v2/runs/query", "selects", { project_ids: [projectId], selects: ["SHARE_URL"] }, /not served/],
      ["/api/v2/runs/query", "selects", { project_ids: [projectId], selects: ["NOPE"] }, /not a field/],
      ["/api/v2/runs/query", "ai_search", { project_ids: [projectId], ai_search: "x" }, /AI search/],
      [
        "/api/v2/threads/query",
        "thread_filter",
        { project_id: projectId, thread_filter: "x" },
        /thread summaries/,
      ],
      ["/api/v2/traces/query", "cursor", { project_id: projectId, cursor: "bm9wZQ" }, /cursor/i],
    ];
    for (const [path, field, body, msg] of cases) {
      const r = await call("POST", path, { headers, body });
      expect(r.status, `${path} ${r.text}`).toBe(422);
      const d = r.json.detail.find((x: { loc: unknown[] }) => x.loc.includes(field));
      expect(d?.msg, r.text).toMatch(msg);
    }
  });
});

describe("the default project", () => {
  it("a new workspace lists its default project, made once however many list at the same time", async () => {
    const tenant = newTenantId();
    const key = newApiKey();
    await ensureTenant(tenant, "fresh");
    await storeApiKey(key, [tenant]);
    const fresh = new Client({ apiUrl: `${base}/api/v1`, apiKey: key });
    const lists = await Promise.all(Array.from({ length: 6 }, () => collect(fresh.listProjects())));
    for (const l of lists) expect(l.map((p) => p.name)).toEqual(["default"]);
    expect(new Set(lists.map((l) => l[0].id)).size).toBe(1);
    // Runs sent without a project land in it.
    const id = crypto.randomUUID();
    await new Client({ apiUrl: `${base}/api/v1`, apiKey: key, autoBatchTracing: false }).createRun({
      id,
      name: "no-project",
      run_type: "chain",
      inputs: {},
    });
    const r = await call("GET", `/api/v1/runs/${id}`, { headers: { "X-Api-Key": key } });
    expect(r.json.session_id).toBe(lists[0][0].id);
  });
});
