import { bundleGraphs, installDependencies } from "./bundle.ts";
import type { LogLine } from "./exec.ts";
import { readGraphConfig, unhonouredKeys } from "./graph-config.ts";

// The untrusted part of a revision build: everything that reads or runs the repository's files (its graph
// config, npm's install, esbuild's bundling). It is given folders and what the platform decided to hand it,
// nothing else: no platform setting, credential or table, so it can run in a process (and sandbox) of its own
// (infra/build/build-source.ts, started by source-build-process.ts).

export interface SourceBuildJob {
  /** The fetched repository (symlinks already checked). */
  src: string;
  /** Where the artifact's files go. */
  out: string;
  /** The build's own scratch folder: npm's HOME, TMPDIR and config files. */
  scratch: string;
  /** The workspace's folder of the dependency cache, if any. */
  cacheDir?: string;
  graphConfigPath: string;
  /** The deployment's secrets an .npmrc names as auth tokens (`${NAME}`), and only those. */
  npmSecrets: Record<string, string>;
  /** Runtimes are Lambda functions (AWS): how the node_version note reads. */
  lambdaRuntimes: boolean;
}

export async function buildSource(job: SourceBuildJob, log: LogLine): Promise<void> {
  log(`Reading the graph config ${job.graphConfigPath}`);
  const { config: graphConfig, configDir } = await readGraphConfig(job.src, job.graphConfigPath);
  const unhonoured = unhonouredKeys(graphConfig);
  if (unhonoured.length)
    log(
      `Not honoured by this platform (kept, no effect): ${unhonoured.join(", ")} of ${job.graphConfigPath}`,
    );
  for (const why of graphConfig.not_served ?? []) log(`Not served here (the rest of the config is): ${why}`);
  log(`Graphs: ${Object.keys(graphConfig.graphs).join(", ")}`);
  if (graphConfig.http?.cors) log("CORS: the agent server answers with http.cors of the graph config");
  const major = process.versions.node.split(".")[0];
  if (graphConfig.node_version && !job.lambdaRuntimes && graphConfig.node_version !== major)
    log(
      `node_version ${graphConfig.node_version}: the local cloud runs graphs on Node.js ${process.versions.node} (in AWS the runtime is nodejs${graphConfig.node_version}.x)`,
    );
  if (graphConfig.auth?.path)
    log(
      `Custom auth: ${graphConfig.auth.path} authenticates requests without a platform API key${graphConfig.auth.disable_studio_auth ? " (and with one: disable_studio_auth)" : ""}`,
    );
  await installDependencies(configDir, log, {
    repoDir: job.src,
    scratch: job.scratch,
    secrets: async () => job.npmSecrets,
    ...(job.cacheDir ? { cacheDir: job.cacheDir } : {}),
  });
  await bundleGraphs({ repoDir: job.src, configDir, config: graphConfig, outDir: job.out, log });
}
