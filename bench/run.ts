// npm run bench -- <name>: each benchmark prints its figures beside a reference measured in the same run.
const benches: Record<string, () => Promise<void>> = {
  startup: async () => {
    await (await import("./startup.ts")).startupBench();
    await (await import("./lambda-startup.ts")).lambdaStartupBench();
  },
  // The Lambda bundles' rows of `startup` alone (no local cloud started).
  "lambda-startup": async () => (await import("./lambda-startup.ts")).lambdaStartupBench(),
  ingest: async () => (await import("./ingest.ts")).ingestBench(),
  "runs-v2": async () => (await import("./runs-v2.ts")).runsV2Bench(),
  threads: async () => (await import("./threads.ts")).threadsBench(),
  export: async () => (await import("./export.ts")).exportBench(),
  agent: async () => (await import("./agent.ts")).agentBench(),
  deploy: async () => (await import("./deploy.ts")).deployBench(),
  reliability: async () => (await import("./reliability.ts")).reliabilityBench(),
  "policy-proxy": async () => (await import("./policy-proxy.ts")).policyProxyBench(),
  "rate-limit": async () => (await import("./rate-limit.ts")).rateLimitBench(),
  // The console's bundle sizes against their budgets and Lighthouse scores of four pages (a platform started).
  console: async () => (await import("./console.ts")).consoleBench(),
  parquet: async () => {
    await (await import("./parquet.ts")).parquetEncoderBench();
  },
};

const names = process.argv.slice(2);
// The reliability summary is asked for by name (it runs for minutes and restarts platforms on purpose).
const chosen = names.length ? names : Object.keys(benches).filter((n) => n !== "reliability");
for (const name of chosen) {
  const run = benches[name];
  if (!run) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`);
    process.exit(2);
  }
  await run();
}
// A benchmark that found failures (the reliability summary) sets process.exitCode.
process.exit(process.exitCode ?? 0);
