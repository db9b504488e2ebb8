import { z } from "zod";
import { receiveWebhook, WebhookAnswer } from "../../../shared/control/push-deploy.ts";
import { defineHandler } from "../../handler.ts";

// No API key (GitHub cannot send one): the delivery's HMAC signature, made with the webhook secret of the
// integration the URL names, authenticates it. The raw body is what was signed: it is read as sent, never
// parsed and re-serialized before the check.
export const handler = defineHandler({
  query: z.object({
    integration_id: z
      .string()
      .min(1)
      .max(128)
      .describe("The integration whose webhook secret signs the deliveries (put it in the webhook's URL)"),
  }),
  rawBody: true,
  response: WebhookAnswer,
  doc: {
    description:
      "Point a repository's webhook here (Payload URL `<API URL>/v1/integrations/github/webhook?integration_id=<id>`, " +
      "content type application/json, the integration's webhook_secret as Secret, the push event). A push to the " +
      "repository and ref a deployment tracks makes a new revision, at the pushed commit, of every deployment of the " +
      "integration's workspace with source_config.build_on_push true. ping and other events are answered and " +
      "ignored; a delivery id seen in the last 7 days is answered as a duplicate and does nothing.",
    headers: {
      "X-GitHub-Event": "The event: push acts, ping and any other event are acknowledged",
      "X-GitHub-Delivery": "The delivery's GUID: a replayed delivery does nothing",
      "X-Hub-Signature-256": "sha256=<hex HMAC-SHA256 of the raw body with the integration's webhook secret>",
    },
    rawBody: {
      contentTypes: ["application/json", "application/x-www-form-urlencoded"],
      description: "GitHub's event payload, as signed (form-encoded: its payload field)",
    },
    responses: {
      "400": "Not a webhook delivery: missing X-GitHub-* headers, or a payload that is not the event's JSON",
      "401":
        "No valid signature, or no integration with a webhook secret under integration_id (one answer for both)",
      "409": "A deployment changed while its revision was made: redeliver",
      "413": "The body is over the size limit",
    },
  },
  handle: ({ query, headers, raw }) => receiveWebhook({ integrationId: query.integration_id, headers, raw }),
});
