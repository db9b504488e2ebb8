import { z } from "zod";
import { qBool, qCsv, qInt } from "../../../shared/http/query.ts";
import { MAX_PROJECT_IDS } from "../../../shared/platform/list-bounds.ts";
import { listProjects, Project } from "../../../shared/projects/projects.ts";
import { defineHandler } from "../../handler.ts";

// The filters the langsmith SDK's listProjects sends are applied; the hosted API's others (dataset versions,
// sorting, tag and facet filters) are refused rather than ignored.
const refused = (why: string) => z.never({ error: why }).optional();
const metadata = z.string().transform((s, ctx) => {
  try {
    const v: unknown = JSON.parse(s);
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {}
  ctx.addIssue({ code: "custom", message: "metadata must be a JSON object of key/value pairs" });
  return z.NEVER;
});

export const handler = defineHandler({
  query: z.looseObject({
    name: z.string().optional(),
    name_contains: z.string().optional(),
    // A repeated `id` arrives comma-joined.
    id: qCsv().pipe(z.array(z.uuid()).max(MAX_PROJECT_IDS)).optional(),
    reference_dataset: qCsv().pipe(z.array(z.uuid()).max(MAX_PROJECT_IDS)).optional(),
    reference_free: qBool().optional(),
    metadata: metadata.optional(),
    // Projects always carry their run count and first/last run times: with or without stats, the same answer.
    include_stats: qBool().optional(),
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 1_000_000).optional(),
    dataset_version: refused("datasets are not served here, so neither are their versions"),
    sort_by: refused("projects are listed newest first; sorting is not served"),
    sort_by_desc: refused("projects are listed newest first; sorting is not served"),
    sort_by_feedback_key: refused("projects are listed newest first; sorting is not served"),
    tag_value_id: refused("filtering projects by tag is not served"),
    facets: refused("facets are not served"),
  }),
  response: z.array(Project),
  handle: ({ tenantId, query }) =>
    listProjects(tenantId, {
      name: query.name,
      name_contains: query.name_contains || undefined,
      ids: query.id,
      reference_datasets: query.reference_dataset,
      reference_free: query.reference_free,
      metadata: query.metadata,
      limit: query.limit ?? 100,
      offset: query.offset ?? 0,
    }),
});
