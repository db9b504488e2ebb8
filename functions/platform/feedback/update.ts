import { z } from "zod";
import { FeedbackOut, FeedbackUpdate, updateFeedback } from "../../../shared/runs/feedback.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ feedback_id: z.uuid() }),
  body: FeedbackUpdate,
  response: FeedbackOut,
  handle: ({ tenantId, params, body }) => updateFeedback(tenantId, params.feedback_id, body),
});
