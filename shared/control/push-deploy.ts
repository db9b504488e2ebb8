import { z } from "zod";
import { CREATE_ONLY, cancelCodes, transact } from "../aws/ddb.ts";
import { localRefCommit } from "../build/source.ts";
import { config } from "../config.ts";
import { BadGateway, BuildError, Conflict, PayloadTooLarge, Unauthorized } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import { logger } from "../log.ts";
import {
  type DeploymentRecord,
  deploymentKeys,
  deployments,
  forgetDeploymentRecord,
  type IntegrationRecord,
  type WebhookDeliveryRecord,
  webhookDeliveries,
} from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import { refCommit } from "./github.ts";
import {
  deliveryOf,
  payloadOf,
  pushMatches,
  pushOf,
  repositoryIdentity,
  signatureMatches,
} from "./github-webhook.ts";
import { integrationToken, webhookIntegration } from "./integrations.ts";
import { launchRevision } from "./pipeline.ts";
import { grantedFolders } from "./repo-grants.ts";
import { latestRevisionWrites, newRevision } from "./revisions.ts";

// Push-to-deploy (`build_on_push`): GitHub's webhook deliveries, each signed with its integration's webhook
// secret. A push to the repository and ref a deployment tracks makes a new revision of every such deployment
// with build_on_push, pinned to the pushed commit; the delivery is recorded in the same transaction, so a
// replayed (or concurrent) delivery of the same id makes nothing more. A delivery builds only while its commit is
// still the ref's head (asked of the source), so an old delivery, replayed under any id, redeploys nothing.

/** Kept this long: GitHub redelivers on request, from its last few days of deliveries. */
const DELIVERY_TTL_S = 7 * 24 * 3600;
/** A transaction holds 100 items: the delivery and two per deployment. */
const MAX_DEPLOYMENTS_PER_PUSH = 49;
/** A deployment changed while its revision was written (a PATCH raced): read again, this many times. */
const ATTEMPTS = 3;
const REFUSED = "Invalid webhook signature, or no integration with a webhook secret has this id";

const Made = z.object({ deployment_id: z.string(), revision_id: z.string() });
export const WebhookAnswer = z.object({
  event: z.string(),
  delivery_id: z.string(),
  /** This delivery id was received before: nothing was done again (the revisions are those it made then). */
  duplicate: z.boolean(),
  /** Why nothing was done, when nothing was. */
  ignored: z.string().nullable(),
  revisions: z.array(Made),
});
export type WebhookAnswer = z.output<typeof WebhookAnswer>;

export interface WebhookRequest {
  integrationId: string;
  headers: Record<string, string | undefined>;
  raw: Buffer;
}

/** Receives one delivery: 400 for a request that is no delivery, 401 unless signed with the integration's secret. */
export async function receiveWebhook(req: WebhookRequest): Promise<WebhookAnswer> {
  const delivery = deliveryOf(req.headers);
  if (req.raw.length > config.maxBodyBytes) throw new PayloadTooLarge(config.maxBodyBytes);
  const found = await webhookIntegration(req.integrationId);
  // Unknown integration, none with a secret, wrong signature: one answer, so an unsigned caller learns nothing.
  if (!found || !signatureMatches(found.secret, req.raw, req.headers["x-hub-signature-256"]))
    throw new Unauthorized(REFUSED);
  const { integration } = found;
  const payload = payloadOf(req.raw, req.headers["content-type"]);
  const answer = (ignored: string | null, made: WebhookAnswer["revisions"] = [], duplicate = false) => ({
    event: delivery.event,
    delivery_id: delivery.id,
    duplicate,
    ignored,
    revisions: made,
  });
  if (delivery.event === "ping") return answer("ping: the webhook reaches this platform");
  if (delivery.event !== "push") return answer(`${delivery.event} events are not acted on`);
  const push = pushOf(payload);
  if (push.deleted) return answer("the pushed ref was deleted");

  const tenant = integration.tenant_id;
  const record = (made: WebhookAnswer["revisions"]): WebhookDeliveryRecord => ({
    tenant_id: tenant,
    integration_id: integration.id,
    delivery_id: delivery.id,
    event: delivery.event,
    revisions: made,
    created_at: canonicalNow(),
    expires_at: Math.floor(Date.now() / 1000) + DELIVERY_TTL_S,
  });
  for (let attempt = 1; ; attempt++) {
    const all = await deployments.list(deploymentKeys.pk(tenant), { consistent: true });
    const matching = all
      .filter(
        (d) =>
          d.source_config.build_on_push === true &&
          pushMatches(push, {
            repo_url: d.source_config.repo_url,
            repo_ref: d.source_revision_config.repo_ref,
          }),
      )
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
    if (matching.length > MAX_DEPLOYMENTS_PER_PUSH)
      logger.warn("a push matches more deployments than one delivery builds", {
        integration_id: integration.id,
        matching: matching.length,
      });
    const built = matching.slice(0, MAX_DEPLOYMENTS_PER_PUSH);
    if (built.length) {
      const now = await headOf(built[0], push.ref, integration);
      if (now !== push.after)
        return answer(
          now
            ? `${push.after} is no longer the head of ${push.ref} (${now} is): an old delivery is not built`
            : `${push.ref} no longer exists in the repository: an old delivery is not built`,
        );
    }
    const at = canonicalNow();
    const planned = built.map((d) => ({ d, revisionId: uuidv7() }));
    const made = planned.map(({ d, revisionId }) => ({ deployment_id: d.id, revision_id: revisionId }));
    try {
      await transact([
        { Put: webhookDeliveries.putInput(record(made), CREATE_ONLY) },
        ...planned.flatMap(({ d, revisionId }) => revisionItems(d, revisionId, push.after, at)),
      ]);
    } catch (err) {
      const codes = cancelCodes(err);
      if (!codes) throw err;
      if (codes[0] === "ConditionalCheckFailed") {
        const seen = await webhookDeliveries.get({
          tenant,
          integration: integration.id,
          delivery: delivery.id,
        });
        return answer("this delivery was received before", seen?.revisions ?? [], true);
      }
      if (attempt >= ATTEMPTS)
        throw new Conflict("A deployment changed while its revision was made: redeliver");
      continue;
    } finally {
      for (const { d } of planned) forgetDeploymentRecord(tenant, d.id);
    }
    for (const m of made) await launchRevision(tenant, m.deployment_id, m.revision_id);
    logger.info("push delivery made revisions", {
      integration_id: integration.id,
      delivery_id: delivery.id,
      revisions: made.length,
    });
    return answer(
      made.length ? null : "no deployment with build_on_push tracks this repository and ref",
      made,
    );
  }
}

/** A new revision of the deployment with its current revision config, pinned to the pushed commit. */
function revisionItems(d: DeploymentRecord, revisionId: string, commit: string, at: string) {
  return latestRevisionWrites(
    d,
    newRevision(d.tenant_id, d.id, revisionId, d.source, d.source_revision_config, at, {
      source_commit: commit,
    }),
  );
}

/**
 * The commit `ref` names now in the repository the deployment builds: its host's API for an https repository
 * (with the integration's token), git for a local one (the local cloud's).
 */
async function headOf(d: DeploymentRecord, ref: string, integration: IntegrationRecord) {
  const url = d.source_config.repo_url ?? "";
  if (!/^https?:\/\//i.test(url)) {
    if (!config.localMode) return undefined;
    return localRefCommit(url, ref, await grantedFolders(d.tenant_id)).catch((err) => {
      throw err instanceof BuildError ? new BadGateway(`Could not read the repository: ${err.message}`) : err;
    });
  }
  const [owner, name] = (repositoryIdentity(url) ?? "").split("/").slice(-2);
  const token = await integrationToken(integration.tenant_id, integration.id);
  return refCommit(integration.api_url, token, owner ?? "", name ?? "", ref);
}
