import { benchWorkspace, pointAwsAt, startPlatform } from "../harness/platform.ts";

// npm run bench -- runs-v2: the v2 reads of one trace of 1,000 runs against the v1 run query of the same runs,
// in the same run. One trace (a root and 999 children) is ingested through /runs/batch; then, in alternating
// rounds, the same fields of all its runs are read (a) through POST /api/v1/runs/query {trace}, 100 a page
// through its cursor, as the SDK's listRuns reads, (b) through GET /api/v2/traces/{id}/runs (client.traces
// .listRuns), (c) through POST /api/v2/runs/query {trace_id}, 100 a page (client.runs.query), and 1,000 a page.
// Goal: the v2 reads ≤ 1× (a). Disk-backed DynamoDB Local as `npm start` runs it; BENCH_IN_MEMORY=1: in memory.
const RUNS = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const V1_FIELDS = [
  "id",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "status",
  "parent_run_ids",
  "dotted_order",
];
const V2_SELECTS = V1_FIELDS.map((f) => f.toUpperCase());

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dotted = (at: number, id: string) =>
  `${new Date(at).toISOString().replace(/[-:.]/g, "").slice(0, -1)}000Z${id}`;

/** The trace: a root and its children, a millisecond apart, in a project of its own. */
function traceOf(project: string, t0: number) {
  const root = crypto.randomUUID();
  const rootDotted = dotted(t0, root);
  const runs = [
    {
      id: root,
      name: "root",
      run_type: "chain",
      start_time: t0,
      end_time: t0 + RUNS + 10,
      dotted_order: rootDotted,
    },
    ...Array.from({ length: RUNS - 1 }, (_, i) => {
      const id = crypto.randomUUID();
      const at = t0 + i + 1;
      return {
        id,
        name: `step-${i}`,
        run_type: "tool",
        start_time: at,
        end_time: at + 1,
        parent_run_id: root,
        dotted_order: `${rootDotted}.${dotted(at, id)}`,
      };
    }),
  ].map((r) => ({
    ...r,
    trace_id: root,
    session_name: project,
    inputs: { i: r.name },
    outputs: { ok: true },
  }));
  return { root, runs };
}

type Call = Awaited<ReturnType<typeof benchWorkspace>>["call"];

/** The four ways to read the trace's runs, each answering how many it read. */
function readersOf(
  call: Call,
  root: string,
  projectId: string,
  t0: number,
): [string, () => Promise<number>][] {
  const v1 = async () => {
    let n = 0;
    let cursor: string | null = null;
    do {
      const page = await call("POST", "/api/v1/runs/query", {
        trace: root,
        limit: 100,
        select: V1_FIELDS,
        cursor,
      });
      n += page.runs.length;
      cursor = page.cursors.next;
    } while (cursor);
    return n;
  };
  const selects = V2_SELECTS.map((s) => `selects=${s}`).join("&");
  const listRuns = async () =>
    (await call("GET", `/api/v2/traces/${root}/runs?project_id=${projectId}&${selects}`)).items
      .length as number;
  const runsQuery = (pageSize: number) => async () => {
    let n = 0;
    let cursor: string | null = null;
    do {
      const page = await call("POST", "/api/v2/runs/query", {
        project_ids: [projectId],
        trace_id: root,
        selects: V2_SELECTS,
        page_size: pageSize,
        min_start_time: new Date(t0 - 60_000).toISOString(),
        ...(cursor ? { cursor } : {}),
      });
      n += page.items.length;
      cursor = page.next_cursor;
    } while (cursor);
    return n;
  };
  return [
    ["v1_query", v1],
    ["v2_trace_runs", listRuns],
    ["v2_runs_query", runsQuery(100)],
    ["v2_runs_query_1000", runsQuery(1000)],
  ];
}

/** A warm-up round, then rounds in turn (each starting at the next reader) so each sees the same machine. */
async function timeInTurns(readers: [string, () => Promise<number>][]) {
  const times: Record<string, number[]> = Object.fromEntries(readers.map(([name]) => [name, []]));
  for (const [, read] of readers) await read();
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, read] of [
      ...readers.slice(round % readers.length),
      ...readers.slice(0, round % readers.length),
    ]) {
      const t = performance.now();
      const n = await read();
      times[name].push(performance.now() - t);
      if (n !== RUNS) throw new Error(`${name} answered ${n} runs of ${RUNS}`);
    }
  return times;
}

export async function runsV2Bench() {
  const p = await startPlatform({
    LOG_LEVEL: "warn",
    ...(process.env.BENCH_IN_MEMORY ? { DYNAMODB_IN_MEMORY: "1" } : {}),
  });
  try {
    pointAwsAt(p.facts);
    const { tenant, call } = await benchWorkspace(p.base);

    const project = `bench-v2-${tenant.slice(0, 8)}`;
    const t0 = Date.now() - 10 * 60_000;
    const { root, runs } = traceOf(project, t0);
    for (let i = 0; i < runs.length; i += 100)
      await call("POST", "/api/v1/runs/batch", { post: runs.slice(i, i + 100) });
    const projectId = (await call("GET", `/api/v1/sessions?name=${project}`))[0].id as string;

    const times = await timeInTurns(readersOf(call, root, projectId, t0));
    const v1p50 = p50(times.v1_query);
    console.log(
      JSON.stringify({
        bench: "runs-v2",
        runs_in_trace: RUNS,
        rounds: ROUNDS,
        p50_ms_v1_query: +v1p50.toFixed(1),
        p50_ms_v2_trace_runs: +p50(times.v2_trace_runs).toFixed(1),
        p50_ms_v2_runs_query: +p50(times.v2_runs_query).toFixed(1),
        p50_ms_v2_runs_query_1000: +p50(times.v2_runs_query_1000).toFixed(1),
        ratio_v2_trace_runs: +(p50(times.v2_trace_runs) / v1p50).toFixed(2),
        ratio_v2_runs_query: +(p50(times.v2_runs_query) / v1p50).toFixed(2),
        ratio_v2_runs_query_1000: +(p50(times.v2_runs_query_1000) / v1p50).toFixed(2),
        goal: "≤ 1×",
      }),
    );
  } finally {
    await p.stop();
  }
}
