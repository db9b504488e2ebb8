import { benchWorkspace, pointAwsAt, startPlatform } from "../harness/platform.ts";

// npm run bench -- threads: thread reads as the project grows. One project holds a thread of TURNS traces; the
// reads (threads.query over the last day, and the thread's traces) are timed with the project at SMALL runs, then
// again after it grew to LARGE runs (runs of no thread, and of other threads, in the same window). The reference is
// the small project's reads in the same run; goal: the large project's reads ≤ 1.5× (flat: they read the thread
// index, not the project). BENCH_THREADS_SMALL / BENCH_THREADS_LARGE set the sizes (10,000 and 100,000 by
// default: ingesting 1,000,000 runs takes this machine about 40 minutes, so the default stops at 100,000).
const SMALL = Number(process.env.BENCH_THREADS_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_THREADS_LARGE ?? 100_000);
const TURNS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const SENDERS = 8;

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function threadsBench() {
  const p = await startPlatform({
    LOG_LEVEL: "warn",
    ...(process.env.BENCH_IN_MEMORY ? { DYNAMODB_IN_MEMORY: "1" } : {}),
  });
  try {
    pointAwsAt(p.facts);
    const { tenant, call } = await benchWorkspace(p.base);
    const project = `bench-threads-${tenant.slice(0, 8)}`;
    const now = Date.now();
    const thread = `bench-thread-${crypto.randomUUID()}`;
    const run = (i: number, threadId?: string) => ({
      id: crypto.randomUUID(),
      name: threadId ? "turn" : "step",
      run_type: "chain",
      // Spread over the day's window, all before the bench thread's turns (the last ten minutes).
      start_time: now - (1 + ((i * 7919) % 20)) * 3_600_000 - (i % 3_600_000),
      end_time: now - (1 + ((i * 7919) % 20)) * 3_600_000 - (i % 3_600_000) + 50,
      session_name: project,
      inputs: { i },
      outputs: { ok: true },
      // One run in ten belongs to one of many other threads (a project's usual mix).
      extra: {
        metadata: threadId ? { thread_id: threadId } : i % 10 === 0 ? { thread_id: `other-${i % 997}` } : {},
      },
    });
    let stored = 0;
    const grow = async (to: number) => {
      const t = performance.now();
      const start = stored;
      let next = stored;
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (next < to) {
            const from = next;
            next = Math.min(to, next + 100);
            const batch = Array.from({ length: next - from }, (_, k) => run(from + k));
            await call("POST", "/api/v1/runs/batch", { post: batch });
          }
        }),
      );
      stored = to;
      return (to - start) / ((performance.now() - t) / 1000);
    };
    await call("POST", "/api/v1/runs/batch", {
      post: Array.from({ length: TURNS }, (_, i) => ({
        ...run(i, thread),
        start_time: now - (TURNS - i) * 60_000,
      })),
    });
    const projectId = (await call("GET", `/api/v1/sessions?name=${project}`))[0].id as string;
    const reads: [string, () => Promise<void>][] = [
      [
        "threads_query",
        async () => {
          const r = await call("POST", "/api/v2/threads/query", { project_id: projectId, page_size: 10 });
          if (!r.items.some((t: { thread_id: string }) => t.thread_id === thread))
            throw new Error("thread not listed");
        },
      ],
      [
        "thread_traces",
        async () => {
          const r = await call(
            "GET",
            `/api/v2/threads/${thread}/traces?project_id=${projectId}&page_size=100`,
          );
          if (r.items.length !== TURNS) throw new Error(`thread traces: ${r.items.length} of ${TURNS}`);
        },
      ],
    ];
    const measure = async () => {
      const times: Record<string, number[]> = Object.fromEntries(reads.map(([n]) => [n, []]));
      for (const [, read] of reads) await read();
      for (let round = 0; round < ROUNDS; round++)
        for (const [name, read] of reads) {
          const t = performance.now();
          await read();
          times[name]!.push(performance.now() - t);
        }
      return Object.fromEntries(Object.entries(times).map(([n, xs]) => [n, p50(xs)]));
    };
    const smallRate = await grow(SMALL);
    const small = await measure();
    const largeRate = await grow(LARGE);
    const large = await measure();
    console.log(
      JSON.stringify({
        bench: "threads",
        project_runs: { small: SMALL, large: LARGE },
        ingest_runs_per_s: { small: +smallRate.toFixed(0), large: +largeRate.toFixed(0) },
        p50_ms_small: Object.fromEntries(Object.entries(small).map(([n, v]) => [n, +v!.toFixed(1)])),
        p50_ms_large: Object.fromEntries(Object.entries(large).map(([n, v]) => [n, +v!.toFixed(1)])),
        ratio_large_to_small: Object.fromEntries(
          Object.entries(large).map(([n, v]) => [n, +(v! / small[n]!).toFixed(2)]),
        ),
        goal: "≤ 1.5× (flat as the project grows)",
      }),
    );
  } finally {
    await p.stop();
  }
}
