// npm run bench -- <name>: each benchmark prints its figures beside a reference measured in the same run.
const benches: Record<string, () => Promise<void>> = {
  startup: async () => (await import("./startup.ts")).startupBench(),
  ingest: async () => (await import("./ingest.ts")).ingestBench(),
  export: async () => (await import("./export.ts")).exportBench(),
  agent: async () => (await import("./agent.ts")).agentBench(),
  deploy: async () => (await import("./deploy.ts")).deployBench(),
  parquet: async () => {
    await (await import("./parquet.ts")).parquetEncoderBench();
  },
};

const names = process.argv.slice(2);
const chosen = names.length ? names : Object.keys(benches);
for (const name of chosen) {
  const run = benches[name];
  if (!run) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`);
    process.exit(2);
  }
  await run();
}
process.exit(0);
