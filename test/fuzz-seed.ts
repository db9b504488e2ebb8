import fc from "fast-check";

// Every fuzz test's runs are replayable: a failure names its seed and path (fast-check's report), and
// `FUZZ_SEED=<seed> FUZZ_PATH=<path> npm test -- <file>` runs that very counterexample again.
const seed = process.env.FUZZ_SEED;
const path = process.env.FUZZ_PATH;
if (seed !== undefined && !/^-?\d+$/.test(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${seed}`);
fc.configureGlobal({
  ...(seed !== undefined ? { seed: Number(seed) } : {}),
  ...(path ? { path } : {}),
  // The report carries the seed, the path and the counterexample, whatever the test's own options.
  verbose: fc.VerbosityLevel.Verbose,
});
