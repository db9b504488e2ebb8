import { access, rm } from "node:fs/promises";
import path from "node:path";
import { bundleGraphs, installDependencies } from "../../build/bundle.ts";
import { readGraphConfig } from "../../build/graph-config.ts";
import { smokeTestGraphs } from "../../build/smoke.ts";
import { config } from "../../config.ts";
import { runtimeSandboxOwner } from "../../containment/sandbox.ts";
import { registerLocalDeployment } from "../deployment.ts";
import type { RuntimeHost } from "./host.ts";
import { LOCAL_DEPLOYMENT_ID, setLocalDeploymentState } from "./local-state.ts";

// Local development without a deployment (`npm start -- --graph ./langgraph.json`, or AGENT_GRAPH_CONFIG): the
// config's graphs are bundled as a build would, then served as deployment `local` of the bootstrap workspace, by a
// runtime of its own like every deployment.

/** `--graph <path>` / `--graph=<path>` from the arguments, else AGENT_GRAPH_CONFIG. */
export function graphConfigArg(
  argv: string[],
  env: { AGENT_GRAPH_CONFIG?: string } = { AGENT_GRAPH_CONFIG: config.localCloud.graphConfig },
): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--graph") return argv[i + 1];
    if (argv[i].startsWith("--graph=")) return argv[i].slice("--graph=".length);
  }
  return env.AGENT_GRAPH_CONFIG || undefined;
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** The nearest node_modules folder in `dir` or a folder above it (where Node resolves a package from). */
export async function nodeModulesAbove(dir: string): Promise<string | undefined> {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (await exists(path.join(at, "node_modules"))) return path.join(at, "node_modules");
    if (at === path.dirname(at)) return undefined;
  }
}

export async function serveLocalGraphs(opts: {
  configPath: string;
  tenantId: string;
  dataDir: string;
  /** The local cloud's runtimes, which start the graphs' runtime. */
  host: RuntimeHost;
  log?: (line: string) => void;
}): Promise<{ graphs: string[] }> {
  const log = opts.log ?? (() => {});
  const configFile = path.resolve(opts.configPath);
  // The config's folder is the "repository": graph paths resolve inside it, as in a deployment.
  const repoDir = path.dirname(configFile);
  setLocalDeploymentState(LOCAL_DEPLOYMENT_ID, "loading");
  try {
    const { config, configDir } = await readGraphConfig(repoDir, path.basename(configFile));
    for (const why of config.not_served ?? []) log(`Not served here (the rest of the config is): ${why}`);
    // A graph folder whose imports already resolve — a node_modules in it or in a folder above it, as Node
    // looks them up (a monorepo's root) — is bundled as it is: install only when there is none.
    if (!(await nodeModulesAbove(configDir))) await installDependencies(configDir, log, { repoDir });
    const outDir = path.join(path.resolve(opts.dataDir), "local-graph");
    await rm(outDir, { recursive: true, force: true });
    const manifest = await bundleGraphs({ repoDir, configDir, config, outDir, log });
    const graphs = await smokeTestGraphs({
      artifactDir: outDir,
      manifest,
      env: {},
      owner: runtimeSandboxOwner(LOCAL_DEPLOYMENT_ID),
    });
    registerLocalDeployment({
      tenant_id: opts.tenantId,
      deployment_id: LOCAL_DEPLOYMENT_ID,
      revision_id: "local",
      artifact_dir: outDir,
      graphs,
      tracing_project_id: null,
      // langgraph.json http.cors and auth apply as to a deployment.
      cors: manifest.cors ?? null,
      custom_auth: manifest.auth ? { disable_studio_auth: manifest.auth.disable_studio_auth === true } : null,
    });
    // Served like any deployment: by its own runtime, started now so the first request finds it ready.
    await opts.host.activated(opts.tenantId, LOCAL_DEPLOYMENT_ID);
    setLocalDeploymentState(LOCAL_DEPLOYMENT_ID, "ready");
    return { graphs: graphs.map((g) => g.graph_id) };
  } catch (err) {
    setLocalDeploymentState(LOCAL_DEPLOYMENT_ID, undefined);
    throw err;
  }
}
