import type { Deployment, RevisionStatus } from "../wire.ts";

/** Revision statuses after which a revision no longer changes (shared/records/control.ts TERMINAL). */
export const TERMINAL: ReadonlySet<string> = new Set<RevisionStatus>([
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
]);

/** Where a deployment's code comes from: its repository (and ref) or its image. */
export function repoOf(d: Pick<Deployment, "source" | "source_config" | "source_revision_config">): string {
  const url = d.source_config.repo_url;
  const ref = d.source_revision_config.repo_ref;
  if (typeof url === "string") return ref ? `${url} @ ${ref}` : url;
  return d.source_revision_config.image_uri ?? d.source;
}

/** The status class of a revision step: ok, failed, or in progress. */
export const statusKind = (s: string) =>
  s === "DEPLOYED" ? "ok" : /FAILED|INTERRUPTED|UNKNOWN/.test(s) ? "bad" : s === "SKIPPED" ? "skip" : "busy";
