import { createFeedback, FeedbackCreate, FeedbackOut } from "../../../shared/runs/feedback.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: FeedbackCreate,
  response: FeedbackOut,
  handle: ({ tenantId, body }) => createFeedback(tenantId, body),
});
