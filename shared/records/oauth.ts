import { repository } from "../aws/repository.ts";
import type { Sealed } from "../crypto/envelope.ts";

// The auth service's records (spec A, auth service v2; main table): a workspace's OAuth clients, its
// authorization-code flows, and the tokens they obtained.
//   provider  PK T#<tenant>#OAUTHPROVIDER  SK <provider_id>   (the caller's slug, unique per workspace)
//   flow      PK T#<tenant>#OAUTHFLOW      SK <auth_id>       expires_at (TTL) 10 minutes after it starts
//   open flow PK T#<tenant>#OAUTHFLOWOPEN  SK <provider_id>#<scopes digest>#<user_id or "">
//             the latest flow authenticate started for that provider, user and scope set (answered again while
//             it is pending); expires_at (TTL) with the flow
//   token     PK T#<tenant>#OAUTHTOKEN     SK <provider_id>#<user_id or "">
//             GSI1 T#<tenant>#OAUTHTOKENID / <id>            (delete by id)
// Secrets are sealed with KMS and never returned: a provider's client secret, a flow's PKCE verifier, a
// token's values, a flow's authorization URL (it carries the state). A flow's state is otherwise stored only
// as its SHA-256.

export const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
export const CHALLENGE_METHODS = ["S256", "plain"] as const;

/** A workspace's OAuth client at one authorization server. */
export interface OAuthProviderRecord {
  id: string;
  tenant_id: string;
  provider_id: string;
  name: string;
  client_id: string;
  auth_url: string;
  token_url: string;
  uses_pkce: boolean;
  code_challenge_method: (typeof CHALLENGE_METHODS)[number];
  token_endpoint_auth_method: (typeof AUTH_METHODS)[number];
  /** Absent when created without; null when a patch cleared them. */
  scopes?: string[] | null;
  /** Absent for a client without a secret (token_endpoint_auth_method none). */
  client_secret_sealed?: Sealed;
  created_at: string;
  updated_at: string;
}

export const oauthProvidersPk = (tenant: string) => `T#${tenant}#OAUTHPROVIDER`;
export const oauthProviders = repository<OAuthProviderRecord, { tenant: string; provider_id: string }>({
  table: "main",
  key: ({ tenant, provider_id }) => ({ PK: oauthProvidersPk(tenant), SK: provider_id }),
  keysOf: (p) => ({ PK: oauthProvidersPk(p.tenant_id), SK: p.provider_id }),
});

/** pending → exchanging (the callback claimed it, once) → completed | failed. */
export type FlowStatus = "pending" | "exchanging" | "completed" | "failed";

/** An authorization-code flow, from authenticate to the provider's callback. */
export interface OAuthFlowRecord {
  /** The auth_id. */
  id: string;
  tenant_id: string;
  provider_id: string;
  /** The provider record's id: a provider deleted and re-created during the flow is not this one. */
  provider_record_id: string;
  user_id: string | null;
  scopes: string[];
  redirect_uri: string;
  /** SHA-256 of the state's secret. */
  state_hash: string;
  /** The PKCE code verifier, while the flow waits for its code (removed when it completes). */
  verifier_sealed?: Sealed;
  /** The authorization URL, while the flow is pending: authenticate answers it again (removed once claimed). */
  url_sealed?: Sealed;
  status: FlowStatus;
  /** Why it failed. */
  error?: string;
  /** The token a completed flow stored. */
  token_id?: string;
  created_at: string;
  updated_at: string;
  /** The table's TTL (epoch seconds). */
  expires_at: number;
}

export const oauthFlows = repository<OAuthFlowRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: `T#${tenant}#OAUTHFLOW`, SK: id }),
  keysOf: (f) => ({ PK: `T#${f.tenant_id}#OAUTHFLOW`, SK: f.id }),
});

/** Points at the flow authenticate answers again for a provider, user and scope set while it is pending. */
export interface OAuthOpenFlowRecord {
  tenant_id: string;
  provider_id: string;
  user_id: string | null;
  /** Of the sorted, distinct requested scopes: a scope set of any length makes a key of fixed size. */
  scopes_digest: string;
  auth_id: string;
  /** The table's TTL (epoch seconds): the flow's. */
  expires_at: number;
}

export const oauthOpenFlowsPk = (tenant: string) => `T#${tenant}#OAUTHFLOWOPEN`;
const openFlowSk = (providerId: string, digest: string, userId: string | null) =>
  `${providerId}#${digest}#${userId ?? ""}`;

export const oauthOpenFlows = repository<
  OAuthOpenFlowRecord,
  { tenant: string; provider_id: string; user_id: string | null; scopes_digest: string }
>({
  table: "main",
  key: (k) => ({ PK: oauthOpenFlowsPk(k.tenant), SK: openFlowSk(k.provider_id, k.scopes_digest, k.user_id) }),
  keysOf: (o) => ({
    PK: oauthOpenFlowsPk(o.tenant_id),
    SK: openFlowSk(o.provider_id, o.scopes_digest, o.user_id),
  }),
});

/** A token of a workspace (user_id null) or one of its users at a provider. */
export interface OAuthTokenRecord {
  id: string;
  tenant_id: string;
  provider_id: string;
  user_id: string | null;
  scopes: string[];
  /** When the access token expires; absent when the grant did not say. */
  token_expires_at?: string;
  /** The table's TTL (epoch seconds): set only for a token without a refresh token, useless once expired. */
  expires_at?: number;
  has_refresh_token: boolean;
  /** JSON of the token's values ({access_token, refresh_token?, token_type?}), sealed. */
  token_sealed: Sealed;
  created_at: string;
  updated_at: string;
}

export const oauthTokensPk = (tenant: string) => `T#${tenant}#OAUTHTOKEN`;
export const oauthTokenIdsPk = (tenant: string) => `T#${tenant}#OAUTHTOKENID`;
export const oauthTokenSk = (providerId: string, userId: string | null) => `${providerId}#${userId ?? ""}`;

export const oauthTokens = repository<
  OAuthTokenRecord,
  { tenant: string; provider_id: string; user_id: string | null }
>({
  table: "main",
  key: ({ tenant, provider_id, user_id }) => ({
    PK: oauthTokensPk(tenant),
    SK: oauthTokenSk(provider_id, user_id),
  }),
  keysOf: (t) => ({
    PK: oauthTokensPk(t.tenant_id),
    SK: oauthTokenSk(t.provider_id, t.user_id),
    GSI1PK: oauthTokenIdsPk(t.tenant_id),
    GSI1SK: t.id,
  }),
});
