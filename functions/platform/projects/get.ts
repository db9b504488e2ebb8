import { z } from "zod";
import { getProject, Project } from "../../../shared/projects/projects.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ session_id: z.uuid() }),
  response: Project,
  handle: ({ tenantId, params }) => getProject(tenantId, params.session_id),
});
