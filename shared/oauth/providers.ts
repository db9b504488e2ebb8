import { randomUUID } from "node:crypto";
import { z } from "zod";
import { config } from "../config.ts";
import { endpointProblem, endpointUrlProblem } from "../containment/ssrf.ts";
import { type Sealed, seal, unseal } from "../crypto/envelope.ts";
import { Conflict, NotFound, ValidationFailed, type ValidationIssue } from "../errors.ts";
import {
  AUTH_METHODS,
  CHALLENGE_METHODS,
  type OAuthProviderRecord,
  oauthProviders,
  oauthProvidersPk,
} from "../records/oauth.ts";
import { canonicalNow } from "../time.ts";
import type { ClientCredentials } from "./client.ts";
import { deleteProviderTokens } from "./tokens.ts";

// OAuth providers (spec A, auth service v2): a workspace's OAuth client at one authorization server.
// `provider_id` is the caller's slug (unique per workspace, the path parameter); client_secret is sealed
// with KMS and never returned. Records: shared/records/oauth.ts.
const sealContext = (tenant: string, id: string) => ({ tenant_id: tenant, record: `oauth-provider/${id}` });

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const ProviderId = z
  .string()
  .regex(PROVIDER_ID, "provider_id may hold letters, digits, '_', '.', '-'");
/** RFC 6749 §3.3 scope-token characters. */
export const Scope = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "a scope is printable ASCII without spaces, '\"' or '\\'");
const tokenUrlRules = { field: "token_url", httpsOnly: true };

/** auth_url is only ever opened by a browser: a plain http(s) URL (https outside local mode). */
const authUrlProblem = (u: string) =>
  endpointUrlProblem(u, true, { field: "auth_url" }) ??
  (!config.localMode && !u.startsWith("https://") ? "auth_url must be an https URL" : undefined);

const url = (check: (u: string) => string | undefined) =>
  z
    .string()
    .max(2048)
    .superRefine((u, ctx) => {
      const problem = check(u);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });
const AuthUrl = url(authUrlProblem);
const TokenUrl = url((u) => endpointUrlProblem(u, config.localMode, tokenUrlRules));

export const ProviderCreate = z.looseObject({
  provider_id: ProviderId,
  name: z.string().trim().min(1).max(255),
  client_id: z.string().min(1).max(512),
  client_secret: z.string().min(1).max(4096).nullish(),
  auth_url: AuthUrl,
  token_url: TokenUrl,
  uses_pkce: z
    .boolean()
    .nullish()
    .transform((b) => b ?? false),
  code_challenge_method: z
    .enum(CHALLENGE_METHODS)
    .nullish()
    .transform((m) => m ?? "S256"),
  token_endpoint_auth_method: z
    .enum(AUTH_METHODS)
    .nullish()
    .transform((m) => m ?? "client_secret_post"),
  scopes: z.array(Scope).max(100).nullish(),
});
export type ProviderCreateIn = z.output<typeof ProviderCreate>;

export const ProviderPatch = z.looseObject({
  provider_id: z.string().optional(),
  name: z.string().trim().min(1).max(255).nullish(),
  client_id: z.string().min(1).max(512).nullish(),
  client_secret: z.string().min(1).max(4096).nullish(),
  auth_url: AuthUrl.nullish(),
  token_url: TokenUrl.nullish(),
  uses_pkce: z.boolean().nullish(),
  code_challenge_method: z.enum(CHALLENGE_METHODS).nullish(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).nullish(),
  scopes: z.array(Scope).max(100).nullish(),
});
export type ProviderPatchIn = z.output<typeof ProviderPatch>;

export const ProviderOut = z.object({
  id: z.string(),
  /** The established API's name for the workspace. */
  organization_id: z.string(),
  provider_id: z.string(),
  name: z.string(),
  client_id: z.string(),
  auth_url: z.string(),
  token_url: z.string(),
  uses_pkce: z.boolean(),
  code_challenge_method: z.enum(CHALLENGE_METHODS),
  token_endpoint_auth_method: z.enum(AUTH_METHODS),
  scopes: z.array(z.string()).nullable(),
  provider_type: z.null(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Provider = z.output<typeof ProviderOut>;

/** A provider as the platform uses it: its wire fields and its sealed secret (stored: OAuthProviderRecord). */
export type ProviderWithSecret = Provider & { client_secret_sealed?: Sealed };

const FIELDS = [
  "name",
  "client_id",
  "auth_url",
  "token_url",
  "uses_pkce",
  "code_challenge_method",
  "token_endpoint_auth_method",
  "scopes",
] as const;

function toProvider(item: OAuthProviderRecord): Provider {
  return {
    id: item.id,
    organization_id: item.tenant_id,
    provider_id: item.provider_id,
    name: item.name,
    client_id: item.client_id,
    auth_url: item.auth_url,
    token_url: item.token_url,
    uses_pkce: item.uses_pkce,
    code_challenge_method: item.code_challenge_method,
    token_endpoint_auth_method: item.token_endpoint_auth_method,
    scopes: item.scopes ?? null,
    provider_type: null,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

const missingSecret = (): ValidationIssue => ({
  loc: ["body", "client_secret"],
  msg: "client_secret is required unless token_endpoint_auth_method is none",
  type: "missing",
});

async function checkTokenUrl(tokenUrl: string): Promise<void> {
  const problem = await endpointProblem(tokenUrl, config.localMode, undefined, tokenUrlRules);
  if (problem)
    throw new ValidationFailed([{ loc: ["body", "token_url"], msg: problem, type: "value_error" }]);
}

export async function getProviderWithSecret(
  tenantId: string,
  providerId: string,
): Promise<ProviderWithSecret | undefined> {
  if (!PROVIDER_ID.test(providerId)) return undefined;
  const item = await oauthProviders.get({ tenant: tenantId, provider_id: providerId });
  return item ? { ...toProvider(item), client_secret_sealed: item.client_secret_sealed } : undefined;
}

export async function getProvider(tenantId: string, providerId: string): Promise<Provider> {
  const rec = await getProviderWithSecret(tenantId, providerId);
  if (!rec) throw new NotFound("OAuth provider not found");
  const { client_secret_sealed: _sealed, ...provider } = rec;
  return provider;
}

/** How to call the provider's token endpoint, its client secret unsealed. */
export async function clientCredentials(
  tenantId: string,
  rec: ProviderWithSecret,
): Promise<ClientCredentials> {
  return {
    tokenUrl: rec.token_url,
    clientId: rec.client_id,
    clientSecret: rec.client_secret_sealed
      ? await unseal(rec.client_secret_sealed, sealContext(tenantId, rec.id))
      : undefined,
    method: rec.token_endpoint_auth_method,
  };
}

export async function createProvider(tenantId: string, body: ProviderCreateIn): Promise<Provider> {
  if (body.token_endpoint_auth_method !== "none" && !body.client_secret)
    throw new ValidationFailed([missingSecret()]);
  await checkTokenUrl(body.token_url);
  const id = randomUUID();
  const at = canonicalNow();
  const item: OAuthProviderRecord = {
    id,
    tenant_id: tenantId,
    provider_id: body.provider_id,
    name: body.name,
    client_id: body.client_id,
    auth_url: body.auth_url,
    token_url: body.token_url,
    uses_pkce: body.uses_pkce,
    code_challenge_method: body.code_challenge_method,
    token_endpoint_auth_method: body.token_endpoint_auth_method,
    scopes: body.scopes ?? undefined,
    created_at: at,
    updated_at: at,
    ...(body.client_secret
      ? { client_secret_sealed: await seal(body.client_secret, sealContext(tenantId, id)) }
      : {}),
  };
  if (!(await oauthProviders.create(item)))
    throw new Conflict(`An OAuth provider '${body.provider_id}' already exists`);
  return toProvider(item);
}

export async function listProviders(tenantId: string): Promise<Provider[]> {
  return (await oauthProviders.list(oauthProvidersPk(tenantId))).map(toProvider);
}

export async function updateProvider(
  tenantId: string,
  providerId: string,
  patch: ProviderPatchIn,
): Promise<Provider> {
  const current = await getProviderWithSecret(tenantId, providerId);
  if (!current) throw new NotFound("OAuth provider not found");
  if (patch.provider_id !== undefined && patch.provider_id !== providerId)
    throw new ValidationFailed([
      { loc: ["body", "provider_id"], msg: "provider_id cannot be changed", type: "value_error" },
    ]);
  const method = patch.token_endpoint_auth_method ?? current.token_endpoint_auth_method;
  if (method !== "none" && !patch.client_secret && !current.client_secret_sealed)
    throw new ValidationFailed([missingSecret()]);
  if (patch.token_url) await checkTokenUrl(patch.token_url);
  const set: Partial<OAuthProviderRecord> = { updated_at: canonicalNow() };
  // null means "not given" (the established API sends nulls), except scopes: null clears them.
  for (const f of FIELDS)
    if (patch[f] !== undefined && (patch[f] !== null || f === "scopes"))
      Object.assign(set, { [f]: patch[f] });
  if (patch.client_secret)
    set.client_secret_sealed = await seal(patch.client_secret, sealContext(tenantId, current.id));
  // Bound to the record read above: a provider deleted and re-created meanwhile is not this one.
  const updated = await oauthProviders.updateReturning(
    { tenant: tenantId, provider_id: providerId },
    { set, when: { id: current.id } },
  );
  if (!updated) throw new NotFound("OAuth provider not found");
  return toProvider(updated);
}

/** Deletes the provider and the tokens obtained through it (they belong to its client registration). */
export async function deleteProvider(tenantId: string, providerId: string): Promise<void> {
  if (!(await getProviderWithSecret(tenantId, providerId))) throw new NotFound("OAuth provider not found");
  await oauthProviders.delete({ tenant: tenantId, provider_id: providerId });
  await deleteProviderTokens(tenantId, providerId);
}
