import { loadavg } from "node:os";

// The knobs, the seeded randomness and the summary of `npm run bench -- reliability` (issue 16, items 1–5).
export type Item = "fuzz" | "isolation" | "crash" | "faults" | "load" | "breakout";
export const ITEMS: Item[] = ["fuzz", "isolation", "crash", "faults", "load", "breakout"];

export interface Knobs {
  /** quick (the CI budget, the default) or full (the issue's figures: ≥ 10 trials, 5 minutes of load). */
  mode: "quick" | "full";
  seed: number;
  only: Item[];
  /** Scenarios whose key is listed (all when empty): RELIABILITY_SCENARIOS=export,ingest,… */
  scenarios: string[];
  /** Crash trials per scenario. */
  trials: number;
  /** Requests per route of the route fuzz. */
  fuzzRuns: number;
  /** Seconds of ingestion load. */
  loadSeconds: number;
  rollbacks: number;
  exports: number;
  /** Share of S3 / DynamoDB requests answered with a fault. */
  faultRate: number;
  /** Where the JSON summary goes. */
  out: string;
}

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === "" || !Number.isFinite(Number(v)) ? fallback : Number(v);
};

/** RELIABILITY_* settings from the environment, defaults by mode. */
export function knobs(): Knobs {
  const mode = process.env.RELIABILITY_MODE === "full" ? "full" : "quick";
  const full = mode === "full";
  const only = (process.env.RELIABILITY_ONLY ?? ITEMS.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter((s): s is Item => (ITEMS as string[]).includes(s));
  return {
    mode,
    seed: num("RELIABILITY_SEED", Math.floor(Math.random() * 2 ** 31)),
    only,
    scenarios: (process.env.RELIABILITY_SCENARIOS ?? "").split(",").filter(Boolean),
    trials: num("RELIABILITY_TRIALS", full ? 10 : 2),
    fuzzRuns: num("FUZZ_RUNS", full ? 40 : 3),
    loadSeconds: num("RELIABILITY_LOAD_SECONDS", full ? 300 : 30),
    rollbacks: num("RELIABILITY_ROLLBACKS", 50),
    exports: num("RELIABILITY_EXPORTS", 16),
    faultRate: num("RELIABILITY_FAULT_RATE", 0.3),
    out: process.env.RELIABILITY_OUT ?? "bench/results/reliability.json",
  };
}

/** Whether the scenario named `key` is to run. */
export const wanted = (k: Knobs, key: string) => k.scenarios.length === 0 || k.scenarios.includes(key);

/** mulberry32: a small seeded generator, so a failing run can be replayed with its printed seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** One line of the table: a scenario, its trials and failures (goal 0), its figures (counts summed over trials). */
export interface Row {
  item: Item;
  scenario: string;
  trials: number;
  failures: number;
  figures: Record<string, number | string>;
  /** What went wrong, one line per failed trial. */
  problems: string[];
  seconds: number;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Figures that are times, rates or sizes: a row keeps the largest of its trials (counts add up). */
const WORST = /( s| ms| MB|\/s)$/;

/** Runs `trial` `n` times; a trial that throws counts as a failure with its message. */
export async function trials(
  item: Item,
  scenario: string,
  n: number,
  trial: (i: number) => Promise<Record<string, number>>,
): Promise<Row> {
  const t0 = performance.now();
  const row: Row = { item, scenario, trials: 0, failures: 0, figures: {}, problems: [], seconds: 0 };
  for (let i = 0; i < n; i++) {
    row.trials++;
    try {
      const figures = await trial(i);
      for (const [k, v] of Object.entries(figures))
        row.figures[k] = WORST.test(k)
          ? Math.max(Number(row.figures[k] ?? v), v)
          : (Number(row.figures[k]) || 0) + v;
    } catch (err) {
      row.failures++;
      row.problems.push(`trial ${i + 1}: ${(err as Error).message}`);
      console.log(`  ${item}/${scenario} trial ${i + 1} failed: ${(err as Error).message}`);
    }
  }
  row.seconds = (performance.now() - t0) / 1000;
  return row;
}

/** Throws with `what` unless `ok`: a trial's check. */
export function check(ok: unknown, what: string): void {
  if (!ok) throw new Error(what);
}

const cell = (v: number | string) =>
  typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(1)) : v;

export function table(rows: Row[]): string {
  const lines = [
    "| item | scenario | trials | failures | figures | s |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.item} | ${r.scenario} | ${r.trials} | ${r.failures} | ${Object.entries(r.figures)
          .map(([k, v]) => `${k} ${cell(v)}`)
          .join(", ")} | ${r.seconds.toFixed(0)} |`,
    ),
  ];
  return lines.join("\n");
}

/** What the machine was doing besides: the 1-minute load average over its cores. */
export const contention = () => ({ loadavg1: Number(loadavg()[0]!.toFixed(2)) });
