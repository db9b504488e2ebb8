import { z } from "zod";
import { qCsv, qInt } from "../../../shared/http/query.ts";
import { MAX_PROJECT_IDS } from "../../../shared/platform/list-bounds.ts";
import { listProjects, Project } from "../../../shared/projects/projects.ts";
import { defineHandler } from "../../handler.ts";

// Other LangSmith filters (reference_free, sort_by, dataset_version, …) are accepted and not applied.
export const handler = defineHandler({
  query: z.looseObject({
    name: z.string().optional(),
    name_contains: z.string().optional(),
    // A repeated `id` arrives comma-joined.
    id: qCsv().pipe(z.array(z.uuid()).max(MAX_PROJECT_IDS)).optional(),
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 1_000_000).optional(),
  }),
  response: z.array(Project),
  handle: ({ tenantId, query }) =>
    listProjects(tenantId, {
      name: query.name,
      name_contains: query.name_contains || undefined,
      ids: query.id,
      limit: query.limit ?? 100,
      offset: query.offset ?? 0,
    }),
});
