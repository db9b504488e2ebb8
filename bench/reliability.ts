import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { contention, type Item, knobs, type Row, table } from "./reliability/summary.ts";

// npm run bench -- reliability: issue 16's figures in one summary — 1 route fuzz (5xx found), 2 isolation sweep
// (leaks), 3 crash-resume (kill -9 at seeded random moments: trials, failures), 4 fault injection (faults
// injected, exports completed, retries recorded), 5 load (p50/p99, RSS start/end), and issue 25's break-out
// attempts (attacks tried, attacks stopped). Goal: 0 in every failures cell. Knobs (env): RELIABILITY_MODE=quick|full, RELIABILITY_SEED, RELIABILITY_ONLY=fuzz,isolation,crash,faults,load,breakout,
// RELIABILITY_TRIALS, FUZZ_RUNS, RELIABILITY_LOAD_SECONDS, RELIABILITY_ROLLBACKS, RELIABILITY_EXPORTS,
// RELIABILITY_FAULT_RATE, RELIABILITY_SCENARIOS (keys: export,ingest,revision,agent,s3-5xx,…), RELIABILITY_OUT (the JSON summary; bench/results/reliability.json by default).
const SECTIONS: Record<Item, () => Promise<(k: ReturnType<typeof knobs>) => Promise<Row[]>>> = {
  fuzz: async () => (await import("./reliability/sweeps.ts")).fuzzSweep,
  isolation: async () => (await import("./reliability/sweeps.ts")).isolationSweep,
  crash: async () => (await import("./reliability/crash.ts")).crashResume,
  faults: async () => (await import("./reliability/faults.ts")).faultInjection,
  load: async () => (await import("./reliability/load.ts")).loadHeld,
  breakout: async () => (await import("./reliability/breakout.ts")).breakoutAttempts,
};

export async function reliabilityBench() {
  const k = knobs();
  const t0 = performance.now();
  console.log(
    `reliability (${k.mode}): seed ${k.seed} (RELIABILITY_SEED=${k.seed} replays it); items ${k.only.join(", ")}; ` +
      `${k.trials} crash trials per scenario, ${k.fuzzRuns} fuzz requests per route, ${k.loadSeconds} s of load; ` +
      `${cpus().length} cores, load average ${contention().loadavg1}`,
  );
  const rows: Row[] = [];
  const sections: Record<string, { seconds: number; contention_before: number; error?: string }> = {};
  const savedEnv = { ...process.env };
  for (const item of k.only) {
    const s0 = performance.now();
    const before = contention().loadavg1;
    console.log(`\n— ${item} —`);
    try {
      const got = await (await SECTIONS[item]())(k);
      rows.push(...got);
      console.log(table(got));
      sections[item] = { seconds: (performance.now() - s0) / 1000, contention_before: before };
    } catch (err) {
      const message = (err as Error).stack ?? String(err);
      console.log(`${item} could not run: ${message}`);
      rows.push({
        item,
        scenario: "(section)",
        trials: 1,
        failures: 1,
        figures: {},
        problems: [message],
        seconds: (performance.now() - s0) / 1000,
      });
      sections[item] = {
        seconds: (performance.now() - s0) / 1000,
        contention_before: before,
        error: message,
      };
    } finally {
      // The sweeps point this process's AWS clients at their platform; the next section starts clean.
      for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
      Object.assign(process.env, savedEnv);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const failures = rows.reduce((n, r) => n + r.failures, 0);
  console.log(`\nreliability summary (${k.mode}, seed ${k.seed}, ${seconds.toFixed(0)} s):`);
  console.log(table(rows));
  for (const r of rows)
    for (const p of r.problems.slice(0, 10)) console.log(`  ${r.item}/${r.scenario}: ${p}`);
  console.log(`failures: ${failures} (goal 0)`);
  const summary = {
    mode: k.mode,
    seed: k.seed,
    knobs: k,
    finished_at: new Date().toISOString(),
    seconds,
    cores: cpus().length,
    load_average_end: contention().loadavg1,
    failures,
    sections,
    rows,
  };
  mkdirSync(dirname(k.out), { recursive: true });
  writeFileSync(k.out, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`summary written to ${k.out}`);
  if (failures > 0) process.exitCode = 1;
}
