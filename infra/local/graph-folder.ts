import { stat } from "node:fs/promises";
import path from "node:path";
import { config } from "../../shared/config.ts";
import { controlApi, revisionOutcome } from "../../shared/control/api-client.ts";
import { grantFolder } from "../../shared/control/repo-grants.ts";
import { deploymentNames } from "../../shared/records/control.ts";

// Local development from a folder (`npm start -- --graph ./langgraph.json`, or AGENT_GRAPH_CONFIG): the folder is
// deployed as deployment `local` of the bootstrap workspace — an ordinary deployment, created (or given a new
// revision) through the control plane's own API, built and deployed by the revision pipeline like any other, so
// crons, metrics, the run sweeper and every function see its record. `/agents/local/…` names it at the gateway.

/** The name of the deployment `--graph` deploys, and the alias its agent server answers at. */
export const LOCAL_GRAPH_DEPLOYMENT = "local";

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

/** The id of the workspace's deployment `local`, if it has one (the gateway's alias). */
export async function localGraphDeployment(tenantId: string): Promise<string | undefined> {
  return (await deploymentNames.get({ tenant: tenantId, name: LOCAL_GRAPH_DEPLOYMENT }))?.deployment_id;
}

/** A first build installs the folder's dependencies: as long as the pipeline lets a build take. */
const DEPLOY_TIMEOUT_MS = 30 * 60_000;

export class GraphFolderError extends Error {}

/**
 * Deploys the config's folder as deployment `local` of the operator's workspace (`apiKey` its key, `base` the
 * local cloud's URL) and waits for the revision to be live. The folder is granted to the workspace first, as
 * `npm run grant-folder` would: the operator named it.
 */
export async function deployGraphFolder(opts: {
  configPath: string;
  tenantId: string;
  base: string;
  apiKey: string;
  log?: (line: string) => void;
}): Promise<{ deploymentId: string; graphs: string[] }> {
  const log = opts.log ?? (() => {});
  const configFile = path.resolve(opts.configPath);
  if (!(await stat(configFile).catch(() => undefined))?.isFile())
    throw new GraphFolderError(`${opts.configPath} is not a file`);
  // The config's folder is the "repository": graph paths resolve inside it, as in a deployment.
  const folder = path.dirname(configFile);
  await grantFolder(opts.tenantId, folder).catch((err) => {
    throw new GraphFolderError(`the folder ${folder} cannot be deployed: ${err.message}`);
  });
  const api = controlApi(opts.base, opts.apiKey);
  const source_config = { repo_url: folder };
  const source_revision_config = { langgraph_config_path: path.basename(configFile) };
  const existing = await localGraphDeployment(opts.tenantId);
  type Deployment = { id: string; latest_revision_id: string };
  const d = existing
    ? await api<Deployment>("PATCH", `/v2/deployments/${existing}`, { source_config, source_revision_config })
    : await api<Deployment>("POST", "/v2/deployments", {
        name: LOCAL_GRAPH_DEPLOYMENT,
        source: "github",
        source_config,
        source_revision_config,
      });
  log(`Deployment ${d.id}${existing ? "" : " created"}, revision ${d.latest_revision_id}: building`);
  const { status, lines } = await revisionOutcome(api, d.id, d.latest_revision_id, {
    timeoutMs: DEPLOY_TIMEOUT_MS,
    pollMs: 500,
  });
  for (const line of lines) log(line);
  if (status !== "DEPLOYED") throw new GraphFolderError(`the revision ended ${status} (its log is above)`);
  const assistants = await api<{ graph_id: string; metadata?: { created_by?: string } }[]>(
    "POST",
    `/agents/${d.id}/assistants/search`,
    { metadata: { created_by: "system" }, limit: 1000 },
  );
  return { deploymentId: d.id, graphs: [...new Set(assistants.map((a) => a.graph_id))].sort() };
}
