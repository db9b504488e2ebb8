import { randomUUID } from "node:crypto";
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import { cancelCodes, toItem, transact } from "../aws/ddb.ts";
import { seal, unseal } from "../crypto/envelope.ts";
import { NotFound } from "../errors.ts";
import { type OAuthTokenRecord, oauthTokenIdsPk, oauthTokens, oauthTokensPk } from "../records/oauth.ts";
import { canonicalTime } from "../time.ts";
import type { TokenGrant } from "./client.ts";

// OAuth tokens obtained through the auth service: one per workspace, provider and user (user_id null: the
// workspace's own). Token values are sealed with KMS and only ever handed to the workspace's authenticate
// and wait calls (the access token, never the refresh token); listings show metadata only.
// Records: shared/records/oauth.ts (`token_expires_at` is the access token's expiry; `expires_at`, the table's
// TTL, is set only for a token without a refresh token, which is useless once expired).
export const tokenPk = oauthTokensPk;
const sealContext = (tenant: string, id: string) => ({ tenant_id: tenant, record: `oauth-token/${id}` });

export interface TokenSecret {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
}

export const TokenOut = z.object({
  id: z.string(),
  provider_id: z.string(),
  user_id: z.string().nullable(),
  scopes: z.array(z.string()),
  expires_at: z.string().nullable(),
  has_refresh_token: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Token = z.output<typeof TokenOut>;

export interface StoredToken {
  token: Token;
  secret: () => Promise<TokenSecret>;
}

function toToken(item: OAuthTokenRecord): Token {
  return {
    id: item.id,
    provider_id: item.provider_id,
    user_id: item.user_id,
    scopes: item.scopes,
    expires_at: item.token_expires_at ?? null,
    has_refresh_token: item.has_refresh_token,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

const keyOf = (tenantId: string, item: OAuthTokenRecord) => ({
  tenant: tenantId,
  provider_id: item.provider_id,
  user_id: item.user_id,
});

const stored = (tenantId: string, item: OAuthTokenRecord): StoredToken => ({
  token: toToken(item),
  secret: async (): Promise<TokenSecret> =>
    JSON.parse(await unseal(item.token_sealed, sealContext(tenantId, item.id))),
});

/** Usable: not expired, or renewable with its refresh token. */
function isUsable(t: Token, now = Date.now()): boolean {
  return t.has_refresh_token || !t.expires_at || Date.parse(t.expires_at) > now;
}

/** Fresh: the access token works for at least `skewMs` more. */
export function isFresh(t: Token, now = Date.now(), skewMs = 30_000): boolean {
  return !t.expires_at || Date.parse(t.expires_at) - skewMs > now;
}

export interface TokenInput {
  provider_id: string;
  user_id: string | null;
  /** Scopes the grant did not name are the requested ones (RFC 6749 §5.1). */
  requested_scopes: string[];
  grant: TokenGrant;
  /** Kept when a refresh does not rotate it. */
  previous_refresh_token?: string;
  /** Set when replacing a token in place (a refresh keeps the id). */
  id?: string;
  created_at?: string;
}

/** The token's record as a transaction Put (sealed), and its metadata. */
export async function tokenPut(
  tenantId: string,
  t: TokenInput,
): Promise<{ put: TransactWriteItem; token: Token }> {
  const id = t.id ?? randomUUID();
  const now = Date.now();
  const at = canonicalTime(now)!;
  const refresh = t.grant.refresh_token ?? t.previous_refresh_token;
  const expiresMs = t.grant.expires_in ? now + t.grant.expires_in * 1000 : undefined;
  const secret: TokenSecret = {
    access_token: t.grant.access_token,
    ...(refresh ? { refresh_token: refresh } : {}),
    ...(t.grant.token_type ? { token_type: t.grant.token_type } : {}),
  };
  const item: OAuthTokenRecord = {
    id,
    tenant_id: tenantId,
    provider_id: t.provider_id,
    user_id: t.user_id,
    scopes: t.grant.scopes ?? t.requested_scopes,
    token_expires_at: expiresMs ? canonicalTime(expiresMs) : undefined,
    expires_at: expiresMs && !refresh ? Math.ceil(expiresMs / 1000) : undefined,
    has_refresh_token: !!refresh,
    token_sealed: await seal(JSON.stringify(secret), sealContext(tenantId, id)),
    created_at: t.created_at ?? at,
    updated_at: at,
  };
  return { put: { Put: oauthTokens.putInput(item) }, token: toToken(item) };
}

export async function saveToken(tenantId: string, t: TokenInput): Promise<Token> {
  const { put, token } = await tokenPut(tenantId, t);
  await transact([put]);
  return token;
}

export async function findToken(
  tenantId: string,
  providerId: string,
  userId: string | null,
): Promise<StoredToken | undefined> {
  const item = await oauthTokens.get({ tenant: tenantId, provider_id: providerId, user_id: userId });
  return item ? stored(tenantId, item) : undefined;
}

/** Every token of a provider in the workspace (all users), or one user's. */
async function tokenItems(
  tenantId: string,
  providerId?: string,
  userId?: string,
): Promise<OAuthTokenRecord[]> {
  if (providerId && userId !== undefined) {
    const one = await oauthTokens.get({ tenant: tenantId, provider_id: providerId, user_id: userId }, false);
    return one ? [one] : [];
  }
  return oauthTokens.list(oauthTokensPk(tenantId), { prefix: providerId ? `${providerId}#` : undefined });
}

/** Whether the workspace (or one user in it) holds a usable token for the provider. */
export async function hasToken(tenantId: string, providerId: string, userId?: string): Promise<boolean> {
  const items = await tokenItems(tenantId, providerId, userId);
  return items.some((i) => isUsable(toToken(i)));
}

export async function listTokens(
  tenantId: string,
  q: { provider_id?: string; user_id?: string },
): Promise<Token[]> {
  const items = await tokenItems(tenantId, q.provider_id, q.user_id);
  return items
    .map(toToken)
    .filter((t) => q.user_id === undefined || t.user_id === q.user_id)
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
}

export async function deleteToken(tenantId: string, tokenId: string): Promise<void> {
  let item: OAuthTokenRecord | undefined;
  for await (const items of oauthTokens.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk AND GSI1SK = :id",
    values: { ":pk": oauthTokenIdsPk(tenantId), ":id": tokenId },
  })) {
    item ??= items.find((t) => t.tenant_id === tenantId && t.id === tokenId);
    if (item) break;
  }
  if (!item) throw new NotFound("OAuth token not found");
  try {
    // Only this token: a newer one stored under the same key since the lookup stays.
    await transact([
      {
        Delete: {
          ...oauthTokens.deleteInput(keyOf(tenantId, item)),
          ConditionExpression: "id = :id",
          ExpressionAttributeValues: toItem({ ":id": tokenId }),
        },
      },
    ]);
  } catch (err) {
    if (cancelCodes(err)?.[0] === "ConditionalCheckFailed") throw new NotFound("OAuth token not found");
    throw err;
  }
}

export async function deleteProviderTokens(tenantId: string, providerId: string): Promise<void> {
  for (const item of await tokenItems(tenantId, providerId)) await oauthTokens.delete(keyOf(tenantId, item));
}
