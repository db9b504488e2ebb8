import { z } from "zod";
import { qBool } from "../../../shared/http/query.ts";
import { createProject, Project, ProjectCreate } from "../../../shared/projects/projects.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  query: z.looseObject({ upsert: qBool().optional() }),
  body: ProjectCreate,
  response: Project,
  handle: ({ tenantId, query, body }) =>
    createProject(tenantId, {
      name: body.name,
      description: body.description,
      extra: body.extra,
      id: body.id,
      reference_dataset_id: body.reference_dataset_id,
      start_time: body.start_time,
      trace_tier: body.trace_tier,
      upsert: query.upsert,
    }),
});
