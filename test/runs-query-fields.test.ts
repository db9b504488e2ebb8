import { Client, type Run } from "langsmith";
import { beforeAll, describe, expect, it } from "vitest";
import { runStats } from "../shared/runs/stats.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Every field of POST /api/v1/runs/query that the langsmith SDK's listRuns sends either narrows the answer as
// its name says or is refused with a 422 that says why (before, the body was read loosely and these were
// ignored: listRuns({ error: true }) answered every run). The runs are made and read with the real SDK.
const client = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key, autoBatchTracing: false });
const project = `query-fields-${crypto.randomUUID().slice(0, 8)}`;
const example = crypto.randomUUID();
let projectId: string;

// Two traces: "good" (root ok, a child llm run with an error) and "plain" (root failed, one child ok).
const good = { root: crypto.randomUUID(), llm: crypto.randomUUID(), tool: crypto.randomUUID() };
const plain = { root: crypto.randomUUID(), child: crypto.randomUUID() };

async function list(props: Omit<Parameters<Client["listRuns"]>[0], "projectId">): Promise<Run[]> {
  const out: Run[] = [];
  for await (const run of client.listRuns({ projectId, ...props })) out.push(run);
  return out;
}
const ids = (runs: Run[]) => runs.map((r) => r.id).sort();
const query = (body: Record<string, unknown>) =>
  call("POST", "/api/v1/runs/query", { headers: auth, body: { session: [projectId], ...body } });

beforeAll(async () => {
  const t0 = Date.now() - 60_000;
  const post = (run: Record<string, unknown>) =>
    client.createRun({ project_name: project, inputs: {}, ...run } as Parameters<Client["createRun"]>[0]);
  // A dotted order segment: the start time to the microsecond, then the run's id.
  const dotted = (at: number, id: string) =>
    `${new Date(at).toISOString().replace(/[-:.]/g, "").slice(0, -1)}000Z${id}`;
  const goodRoot = dotted(t0, good.root);
  await post({
    id: good.root,
    name: "good-root",
    run_type: "chain",
    start_time: t0,
    end_time: t0 + 500,
    trace_id: good.root,
    dotted_order: goodRoot,
    tags: ["vip"],
    reference_example_id: example,
    outputs: { answer: 42 },
  });
  await post({
    id: good.llm,
    name: "good-llm",
    run_type: "llm",
    start_time: t0 + 10,
    end_time: t0 + 100,
    trace_id: good.root,
    parent_run_id: good.root,
    dotted_order: `${goodRoot}.${dotted(t0 + 10, good.llm)}`,
    error: "rate limited",
  });
  await post({
    id: good.tool,
    name: "good-tool",
    run_type: "tool",
    start_time: t0 + 200,
    end_time: t0 + 300,
    trace_id: good.root,
    parent_run_id: good.root,
    dotted_order: `${goodRoot}.${dotted(t0 + 200, good.tool)}`,
    outputs: { ok: true },
  });
  const plainRoot = dotted(t0 + 1000, plain.root);
  await post({
    id: plain.root,
    name: "plain-root",
    run_type: "chain",
    start_time: t0 + 1000,
    end_time: t0 + 1500,
    trace_id: plain.root,
    dotted_order: plainRoot,
    error: "boom",
  });
  await post({
    id: plain.child,
    name: "plain-child",
    run_type: "tool",
    start_time: t0 + 1010,
    end_time: t0 + 1100,
    trace_id: plain.root,
    parent_run_id: plain.root,
    dotted_order: `${plainRoot}.${dotted(t0 + 1010, plain.child)}`,
    outputs: { ok: true },
  });
  projectId = (await client.readProject({ projectName: project })).id;
});

describe("runs query fields the langsmith SDK sends", () => {
  it("error: true answers the failed runs, false the others", async () => {
    expect(ids(await list({ error: true }))).toEqual([good.llm, plain.root].sort());
    expect(ids(await list({ error: false }))).toEqual([good.root, good.tool, plain.child].sort());
  });

  it("parentRunId answers that run's children only", async () => {
    expect(ids(await list({ parentRunId: good.root }))).toEqual([good.llm, good.tool].sort());
  });

  it("referenceExampleId answers the runs made from that example", async () => {
    expect(ids(await list({ referenceExampleId: example }))).toEqual([good.root]);
    expect(await list({ referenceExampleId: crypto.randomUUID() })).toEqual([]);
  });

  it("traceFilter judges each run's root; treeFilter keeps runs whose trace has any match", async () => {
    const underVip = await list({ traceFilter: 'has(tags, "vip")' });
    expect(ids(underVip)).toEqual([good.root, good.llm, good.tool].sort());
    // Tool runs whose trace holds a run named plain-root: the plain trace's tool, not the good one's.
    const withFailure = await list({ treeFilter: 'eq(name, "plain-root")', filter: 'eq(run_type, "tool")' });
    expect(ids(withFailure)).toEqual([plain.child]);
    const llmTrees = await list({ treeFilter: 'eq(run_type, "llm")', isRoot: true });
    expect(ids(llmTrees)).toEqual([good.root]);
    // Both together: each must hold.
    expect(await list({ traceFilter: 'has(tags, "vip")', treeFilter: 'eq(name, "plain-child")' })).toEqual(
      [],
    );
  });

  it("executionOrder 1 is the root runs (deprecated form of isRoot)", async () => {
    expect(ids(await list({ executionOrder: 1 }))).toEqual([good.root, plain.root].sort());
  });

  it("select answers those fields (and id), each present; app_path opens the run in the console", async () => {
    const select = ["name", "outputs", "app_path", "trace_tier"];
    // On the wire: exactly those keys (the SDK adds its own time fields to what it yields).
    const raw = await query({ trace: good.root, select });
    expect(raw.status, raw.text).toBe(200);
    expect(raw.json.runs).toHaveLength(3);
    for (const run of raw.json.runs)
      expect(Object.keys(run).sort()).toEqual(["app_path", "id", "name", "outputs", "trace_tier"]);
    const runs = await list({ traceId: good.root, select });
    const root = runs.find((r) => r.id === good.root)!;
    expect(root).toMatchObject({ name: "good-root", outputs: { answer: 42 }, trace_tier: "longlived" });
    expect(root.app_path).toBe(`/#/traces/${projectId}/trace/${good.root}/${good.root}`);
    // The console answers that path (hash routes: the page at / reads the rest).
    const page = await fetch(new URL(root.app_path!, base));
    expect(page.status).toBe(200);
    // The SDK's default select (every listRuns call sends one) keeps what SDK callers read.
    const [llm] = await list({ id: [good.llm] });
    expect(llm).toMatchObject({
      id: good.llm,
      name: "good-llm",
      error: "rate limited",
      parent_run_id: good.root,
    });
    expect(llm.app_path).toBe(`/#/traces/${projectId}/trace/${good.root}/${good.llm}`);
  });

  it("a query without select answers whole runs, as GET /runs/{id} does", async () => {
    const q = await query({ id: [good.llm] });
    expect(q.status, q.text).toBe(200);
    const one = await call("GET", `/api/v1/runs/${good.llm}`, { headers: auth });
    expect(q.json.runs[0]).toEqual(one.json);
    expect(q.json.runs[0].messages).toBeDefined();
  });

  it("refuses what it would otherwise ignore, with a 422 that says why", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ query: "rate" }, "query", /full-text query is not served/],
      [{ order: "sideways" }, "order", /./],
      [{ execution_order: 2 }, "execution_order", /only execution_order 1/],
      [{ execution_order: 1, is_root: false }, "execution_order", /root runs/],
      [{ select: ["name", "child_run_ids"] }, "select", /"child_run_ids" is not a run field here/],
      [{ filter: "eq(name" }, "filter", /./],
      [{ trace_filter: "eq(name" }, "trace_filter", /./],
      [{ tree_filter: "nope(x)" }, "tree_filter", /./],
      [{ parent_run: "not-a-uuid" }, "parent_run", /./],
      [{ error: "yes" }, "error", /./],
    ];
    for (const [body, field, msg] of cases) {
      const r = await query(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      const detail = r.json.detail.find((d: { loc: unknown[] }) => d.loc.includes(field));
      expect(detail, `${JSON.stringify(body)} → ${r.text}`).toBeDefined();
      expect(detail.msg).toMatch(msg);
    }
    // What the SDK sends for options it was not given (null or the default) is no refusal.
    const ok = await query({ query: null, order: "desc", execution_order: null, error: null, select: null });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.runs).toHaveLength(5);
  });
});

describe("run stats (getRunStats)", () => {
  it("figures over the runs the filters match: count, latency percentiles in seconds, error rate, newest start", async () => {
    const all = await client.getRunStats({ projectIds: [projectId] });
    expect(all).toMatchObject({ run_count: 5, error_rate: 0.4, total_tokens: 0, streaming_rate: 0 });
    // Latencies 0.09, 0.09, 0.1, 0.5, 0.5 s.
    expect(all.latency_p50).toBeCloseTo(0.1, 6);
    expect(all.latency_p99).toBeCloseTo(0.5, 6);
    const newest = (await call("GET", `/api/v1/runs/${plain.child}`, { headers: auth })).json.start_time;
    expect(all.last_run_start_time).toBe(newest);
    // The same filters as the query.
    expect((await client.getRunStats({ projectIds: [projectId], error: true })).run_count).toBe(2);
    expect((await client.getRunStats({ projectIds: [projectId], isRoot: true })).run_count).toBe(2);
    expect(
      (await client.getRunStats({ projectIds: [projectId], traceFilter: 'has(tags, "vip")' })).run_count,
    ).toBe(3);
    expect(
      (await client.getRunStats({ projectNames: [project], filter: 'eq(run_type, "tool")' })).run_count,
    ).toBe(2);
    expect(
      (await client.getRunStats({ projectIds: [projectId], filter: 'eq(name, "none")' })).run_count,
    ).toBe(0);
  });

  it("refuses what it does not serve, and more matching runs than its limit, with a 422 that says why", async () => {
    const stats = (body: Record<string, unknown>) =>
      call("POST", "/api/v1/runs/stats", { headers: auth, body: { session: [projectId], ...body } });
    for (const [body, msg] of [
      [{ data_source_type: "historical" }, /data source types are not served/],
      [{ query: "boom" }, /full-text query is not served/],
      [{ filter: "eq(name" }, /./],
    ] as const) {
      const r = await stats(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0].msg).toMatch(msg);
    }
    process.env.RUNS_STATS_MAX_RUNS = "3";
    try {
      await expect(runStats(facts.tenant_id, { session: [projectId] })).rejects.toThrow(
        /more than 3 runs match/,
      );
      expect((await runStats(facts.tenant_id, { session: [projectId], is_root: true })).run_count).toBe(2);
    } finally {
      delete process.env.RUNS_STATS_MAX_RUNS;
    }
  });
});
