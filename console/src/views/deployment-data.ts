// Shapes of the control plane API as the console reads them (shared/control/{deployments,revisions}.ts).
export interface Page<T> {
  resources: T[];
  offset: number;
}

export interface RevisionConfig {
  repo_ref: string | null;
  graph_config_path: string;
  langgraph_config_path: string;
  image_uri: string | null;
}

export interface Deployment {
  id: string;
  name: string;
  source: string;
  source_config: Record<string, unknown>;
  source_revision_config: RevisionConfig;
  /** Names only: the API never answers a secret's value. */
  secrets: { name: string }[];
  latest_revision_id: string;
  active_revision_id: string | null;
  status: string;
  tracing_project_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface Revision {
  id: string;
  deployment_id: string;
  status: string;
  source: string;
  source_revision_config: RevisionConfig;
  status_history: { status: string; at: string }[];
  error: string | null;
  commit_sha: string | null;
  graphs: { graph_id: string; export_name: string; nodes: string[] }[];
  redeploy_of: string | null;
  created_at: string;
  updated_at: string;
}

export interface RevisionLogs {
  revision_id: string;
  status: string;
  build_log: string;
  deploy_log: string;
}

/** Revision statuses after which a revision no longer changes (shared/records/control.ts TERMINAL). */
export const TERMINAL = new Set([
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
]);

export const when = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—";
export const time = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour12: false });
export const shortId = (id: string) => id.slice(0, 8);

/** Where a deployment's code comes from: its repository (and ref) or its image. */
export function repoOf(d: Deployment): string {
  const url = d.source_config.repo_url;
  const ref = d.source_revision_config.repo_ref;
  if (typeof url === "string") return ref ? `${url} @ ${ref}` : url;
  return d.source_revision_config.image_uri ?? d.source;
}

/** The status class of a revision step: ok, failed, or in progress. */
export const statusKind = (s: string) =>
  s === "DEPLOYED" ? "ok" : /FAILED|INTERRUPTED|UNKNOWN/.test(s) ? "bad" : s === "SKIPPED" ? "skip" : "busy";
