import { repository } from "../aws/repository.ts";

// Feedback configs (`/api/v1/feedback-configs`), main table: one per feedback key of a workspace.
//   config  PK T#<tenant>#FBCONFIG  SK <feedback key> (at most 180 characters)

export const feedbackConfigKeys = {
  pk: (tenant: string) => `T#${tenant}#FBCONFIG`,
};

export interface FeedbackConfigRecord {
  id: string;
  tenant_id: string;
  feedback_key: string;
  /** The config as JSON text: {type, min, max, categories, allows_multiple_categories}. */
  config_json: string;
  is_lower_score_better: boolean;
  created_at: string;
  modified_at: string;
}

export const feedbackConfigs = repository<FeedbackConfigRecord, { tenant: string; key: string }>({
  table: "main",
  key: ({ tenant, key }) => ({ PK: feedbackConfigKeys.pk(tenant), SK: key }),
  keysOf: (r) => ({ PK: feedbackConfigKeys.pk(r.tenant_id), SK: r.feedback_key }),
});
