import { z } from "zod";
import { deleteFeedbackConfig } from "../../../shared/runs/feedback-configs.ts";
import { defineHandler } from "../../handler.ts";

// The SDK names the config by its key (every config of the key: here its one) or by its id.
export const handler = defineHandler({
  query: z
    .looseObject({ feedback_key: z.string().min(1).max(180).optional(), id: z.uuid().optional() })
    .refine((q) => (q.feedback_key === undefined) !== (q.id === undefined), {
      error: "name the config by exactly one of feedback_key or id",
    }),
  response: z.object({}),
  handle: async ({ tenantId, query }) => {
    await deleteFeedbackConfig(tenantId, query);
    return {};
  },
});
