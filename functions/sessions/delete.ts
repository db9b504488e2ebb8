import { z } from "zod";
import { defineHandler, reply } from "../../shared/http/handler.ts";
import { deleteProject } from "../../shared/projects/projects.ts";

// LangSmith answers a project deletion with 202: its runs go later, by the runs store.
export const handler = defineHandler({
  params: z.object({ session_id: z.uuid() }),
  response: z.object({}),
  handle: async ({ tenantId, params }) => {
    await deleteProject(tenantId, params.session_id);
    return reply(202, {});
  },
});
