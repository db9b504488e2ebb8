import { randomInt } from "node:crypto";
import { z } from "zod";
import { config } from "../config.ts";
import { endpointProblem, endpointUrlProblem } from "../containment/ssrf.ts";
import { seal, unseal } from "../crypto/envelope.ts";
import { NotFound, validationError } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import {
  type IntegrationRecord,
  integrationById,
  integrationKeys,
  integrations,
  integrationsPk,
} from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import { type GitHubRepository, listInstallationRepositories } from "./github.ts";

// Source-code integrations (spec A, v1): on a self-hosted platform, a GitHub (or GitHub Enterprise) access
// token registered by the workspace. The token is write-only: sealed with KMS, used to list repositories and
// to `git clone` over https, never returned.
// Records: shared/records/control.ts (ids are uuidv7: the sort key lists oldest first).
const sealContext = (tenant: string, id: string) => ({ tenant_id: tenant, record: `integration/${id}` });
const webhookSealContext = (tenant: string, id: string) => ({
  tenant_id: tenant,
  record: `integration/${id}/webhook-secret`,
});
const DEFAULT_API_URL = "https://api.github.com";

const apiUrlRules = { field: "api_url", httpsOnly: true };

/** The secret of the repository's webhook (GitHub signs each delivery with it): write-only. */
const WebhookSecret = z
  .string()
  .min(1)
  .max(1024)
  .describe(
    "The secret of the repository's webhook: write-only (has_webhook_secret says whether one is set)",
  );

export const IntegrationCreate = z.looseObject({
  name: z.string().trim().min(1).max(255),
  access_token: z.string().min(1).max(4096),
  webhook_secret: WebhookSecret.nullish(),
  installation_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullish(),
  api_url: z
    .string()
    .max(2048)
    .nullish()
    .transform((u) => (u ? u.replace(/\/+$/, "") : DEFAULT_API_URL))
    .superRefine((u, ctx) => {
      const problem = endpointUrlProblem(u, config.localMode, apiUrlRules);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
});
export type IntegrationCreateIn = z.output<typeof IntegrationCreate>;

/** PATCH: a new name, or a new webhook secret (null removes it, and with it the webhook). */
export const IntegrationPatch = z.looseObject({
  name: z.string().trim().min(1).max(255).optional(),
  webhook_secret: WebhookSecret.nullable().optional(),
});
export type IntegrationPatchIn = z.output<typeof IntegrationPatch>;

export const IntegrationOut = z.object({
  id: z.string(),
  installation_id: z.number().int(),
  name: z.string(),
  api_url: z.string(),
  has_webhook_secret: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Integration = z.output<typeof IntegrationOut>;

/** What `GET /v1/integrations/github/install` lists: the established API's three fields. */
export const InstallationOut = IntegrationOut.pick({ id: true, installation_id: true, name: true });

export const RepositoryOut = z.object({
  host_integration_id: z.string(),
  id: z.number().int(),
  name: z.string(),
  owner: z.string(),
  url: z.string(),
  default_branch: z.string(),
});
export type Repository = z.output<typeof RepositoryOut>;

const toIntegration = (item: IntegrationRecord): Integration => ({
  id: item.id,
  installation_id: item.installation_id,
  name: item.name,
  api_url: item.api_url,
  has_webhook_secret: Boolean(item.webhook_secret_sealed),
  created_at: item.created_at,
  updated_at: item.updated_at,
});

// Any string is a safe id here: callers pass ids straight from request bodies.
const record = (tenantId: string, id: string) =>
  id && id.length <= 128 ? integrations.get({ tenant: tenantId, id }, false) : Promise.resolve(undefined);

const tokenOf = (tenantId: string, item: IntegrationRecord) =>
  unseal(item.token_sealed, sealContext(tenantId, item.id));

/** The integration, or undefined for an unknown id or another workspace's. */
export async function getIntegration(
  tenantId: string,
  integrationId: string,
): Promise<Integration | undefined> {
  const item = await record(tenantId, integrationId);
  return item ? toIntegration(item) : undefined;
}

/** The integration's access token in clear (for `git clone` over https); undefined for an unknown id. */
export async function integrationToken(tenantId: string, integrationId: string): Promise<string | undefined> {
  const item = await record(tenantId, integrationId);
  return item?.token_sealed ? tokenOf(tenantId, item) : undefined;
}

export async function createIntegration(tenantId: string, body: IntegrationCreateIn): Promise<Integration> {
  const problem = await endpointProblem(body.api_url, config.localMode, undefined, apiUrlRules);
  if (problem) throw validationError(["body", "api_url"], problem);
  const id = uuidv7();
  const at = canonicalNow();
  const integration: Integration = {
    id,
    // GitHub App installations have numeric ids; a token registered here gets one of its own.
    installation_id: body.installation_id ?? randomInt(1, 2 ** 47),
    name: body.name,
    api_url: body.api_url,
    has_webhook_secret: Boolean(body.webhook_secret),
    created_at: at,
    updated_at: at,
  };
  const { has_webhook_secret: _, ...fields } = integration;
  const token_sealed = await seal(body.access_token, sealContext(tenantId, id));
  const webhook_secret_sealed = body.webhook_secret
    ? await seal(body.webhook_secret, webhookSealContext(tenantId, id))
    : undefined;
  await integrations.put({ tenant_id: tenantId, ...fields, token_sealed, webhook_secret_sealed });
  return integration;
}

export async function updateIntegration(
  tenantId: string,
  integrationId: string,
  patch: IntegrationPatchIn,
): Promise<Integration> {
  if (!(await record(tenantId, integrationId))) throw new NotFound("Integration not found");
  const set: Record<string, unknown> = {
    updated_at: canonicalNow(),
    // Integrations made before the webhook receiver have no by-id index entry: the first update writes it.
    GSI1PK: integrationKeys.byIdPk(integrationId),
    GSI1SK: integrationKeys.byIdSk,
  };
  const remove: string[] = [];
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.webhook_secret)
    set.webhook_secret_sealed = await seal(patch.webhook_secret, webhookSealContext(tenantId, integrationId));
  else if (patch.webhook_secret === null) remove.push("webhook_secret_sealed");
  const updated = await integrations.updateReturning(
    { tenant: tenantId, id: integrationId },
    { set, remove },
  );
  if (!updated) throw new NotFound("Integration not found");
  return toIntegration(updated);
}

/**
 * The integration a webhook delivery names and its secret in clear, whatever its workspace; undefined for an
 * unknown id or one without a webhook secret (the caller answers both alike: it has proven nothing yet).
 */
export async function webhookIntegration(
  integrationId: string,
): Promise<{ integration: IntegrationRecord; secret: string } | undefined> {
  const item = await integrationById(integrationId);
  if (!item?.webhook_secret_sealed) return undefined;
  const secret = await unseal(item.webhook_secret_sealed, webhookSealContext(item.tenant_id, item.id));
  return { integration: item, secret };
}

export async function listIntegrations(tenantId: string): Promise<Integration[]> {
  return (await integrations.list(integrationsPk(tenantId))).map(toIntegration);
}

export async function deleteIntegration(tenantId: string, integrationId: string): Promise<void> {
  if (!(await record(tenantId, integrationId))) throw new NotFound("Integration not found");
  await integrations.delete({ tenant: tenantId, id: integrationId });
}

/** The repositories the integration's token can read, from its API host. */
export async function integrationRepositories(
  tenantId: string,
  integrationId: string,
): Promise<Repository[]> {
  const item = await record(tenantId, integrationId);
  if (!item?.token_sealed) throw new NotFound("Integration not found");
  const repos = await listInstallationRepositories(item.api_url, await tokenOf(tenantId, item));
  return repos.map((r: GitHubRepository) => ({ host_integration_id: item.id, ...r }));
}
