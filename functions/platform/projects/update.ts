import { z } from "zod";
import { Project, ProjectUpdate, updateProject } from "../../../shared/projects/projects.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ session_id: z.uuid() }),
  body: ProjectUpdate,
  response: Project,
  handle: ({ tenantId, params, body }) =>
    updateProject(tenantId, params.session_id, {
      name: body.name,
      description: body.description,
      extra: body.extra,
      end_time: body.end_time,
      trace_tier: body.trace_tier,
    }),
});
