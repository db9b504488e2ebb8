import { z } from "zod";
import { invokeTaskAsync } from "../../shared/aws/invoke.ts";
import { defineHandler, reply } from "../../shared/http/handler.ts";
import { deleteProject } from "../../shared/projects/projects.ts";

// LangSmith answers a project deletion with 202: the project is gone at once, its runs shortly after (an
// asynchronous task deletes them).
export const handler = defineHandler({
  params: z.object({ session_id: z.uuid() }),
  response: z.object({}),
  handle: async ({ tenantId, params }) => {
    const project = await deleteProject(tenantId, params.session_id);
    await invokeTaskAsync("PurgeProjectRuns", {
      tenant_id: tenantId,
      session_id: project.id,
      first_run_start_time: project.first_run_start_time,
      last_run_start_time: project.last_run_start_time,
    });
    return reply(202, {});
  },
});
