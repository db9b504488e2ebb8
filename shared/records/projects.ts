import { createHash } from "node:crypto";
import { repository } from "../aws/repository.ts";

// Tracing projects ("sessions" on the LangSmith wire), main table. A project record plus a name record whose
// conditional put makes names unique per workspace; both are written in one transaction.
//   project  PK T#<tenant>#SESSION      SK <id>     GSI1 T#<tenant>#SESSION / <created>#<id>
//   name     PK T#<tenant>#SESSIONNAME  SK <name>, or #sha256:<hex digest> of a name over 1000 bytes
// The name record holds the project's id and name beside its keys (no tenant field, so no repository).

export const projectKeys = {
  pk: (tenant: string) => `T#${tenant}#SESSION`,
  /** A sort key holds at most 1024 bytes; long multibyte names are keyed by their digest instead. */
  nameSk: (name: string) =>
    Buffer.byteLength(name) <= 1000 ? name : `#sha256:${createHash("sha256").update(name).digest("hex")}`,
  name: (tenant: string, name: string) => ({ PK: `T#${tenant}#SESSIONNAME`, SK: projectKeys.nameSk(name) }),
};

export interface ProjectRecord {
  id: string;
  name: string;
  description: string | null;
  extra: Record<string, unknown> | null;
  tenant_id: string;
  start_time: string;
  end_time: string | null;
  reference_dataset_id: string | null;
  /** The retention tier of the runs ingested into it; absent: the platform's default (config.runs). */
  trace_tier?: "longlived" | "shortlived" | null;
  /** Runs ingested into it (ADD on ingestion). */
  run_count: number;
  /** Absent until the first run, so that ingestion can widen them with attribute_not_exists conditions. */
  first_run_start_time?: string;
  last_run_start_time?: string;
  created_at: string;
  updated_at: string;
}

export const projects = repository<ProjectRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: projectKeys.pk(tenant), SK: id }),
  keysOf: (p) => ({
    PK: projectKeys.pk(p.tenant_id),
    SK: p.id,
    GSI1PK: projectKeys.pk(p.tenant_id),
    GSI1SK: `${p.created_at}#${p.id}`,
  }),
});

/** A project's name, held so that two projects of a workspace cannot share one. */
export interface ProjectNameRecord {
  PK: string;
  SK: string;
  /** The project holding the name. */
  id: string;
  name: string;
}
