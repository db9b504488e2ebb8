import { describe, expect, it } from "vitest";
import { AUTHENTICATE_STATUSES, AuthenticateResult, scopesDigest, tokenState } from "./authenticate.ts";
import { WaitResult } from "./flow.ts";
import type { Token } from "./tokens.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(NOW + ms).toISOString();

function token(over: Partial<Token> = {}): Token {
  return {
    id: "t1",
    provider_id: "gh",
    user_id: null,
    scopes: ["repo", "read:user"],
    expires_at: at(3_600_000),
    has_refresh_token: false,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

describe("tokenState: what the token is worth for the requested scopes", () => {
  it("no token is connection_required", () => {
    expect(tokenState(undefined, ["repo"], NOW)).toBe("connection_required");
  });

  it("a token without one of the scopes is connection_required, even a fresh one", () => {
    expect(tokenState(token(), ["repo", "admin"], NOW)).toBe("connection_required");
  });

  it("a token covering the scopes that has not expired is fresh", () => {
    expect(tokenState(token(), ["repo"], NOW)).toBe("fresh");
    expect(tokenState(token(), [], NOW)).toBe("fresh");
    expect(tokenState(token({ expires_at: null }), ["repo"], NOW)).toBe("fresh");
  });

  it("an expired token is refreshable with a refresh token, token_expired without", () => {
    const expired = { expires_at: at(-1000) };
    expect(tokenState(token({ ...expired, has_refresh_token: true }), ["repo"], NOW)).toBe("refreshable");
    expect(tokenState(token(expired), ["repo"], NOW)).toBe("token_expired");
  });

  it("a token about to expire (within 30 s) counts as expired", () => {
    expect(tokenState(token({ expires_at: at(10_000) }), ["repo"], NOW)).toBe("token_expired");
  });
});

describe("scopesDigest: one open flow per scope set", () => {
  it("order and repeats make the same set", () => {
    expect(scopesDigest(["b", "a", "a"])).toBe(scopesDigest(["a", "b"]));
  });

  it("another set is another digest, of fixed size", () => {
    expect(scopesDigest(["a"])).not.toBe(scopesDigest(["a", "b"]));
    expect(scopesDigest([])).not.toBe(scopesDigest([""]));
    expect(scopesDigest(["ab"])).not.toBe(scopesDigest(["a", "b"]));
    expect(scopesDigest(Array.from({ length: 100 }, (_, i) => `scope-${i}`))).toMatch(/^[\w-]{43}$/);
  });
});

describe("the answers' schemas", () => {
  it("authenticate answers the four statuses of compat-notes and no other", () => {
    expect(AUTHENTICATE_STATUSES).toEqual(["completed", "pending", "connection_required", "token_expired"]);
    for (const status of ["failed", "expired", "timeout", "not_found"])
      expect(AuthenticateResult.safeParse({ status }).success, status).toBe(false);
  });

  it("wait answers its own statuses, with the failure's reason", () => {
    expect(WaitResult.shape.status.options).toEqual(["completed", "pending", "timeout", "failed", "expired"]);
    expect(WaitResult.parse({ status: "failed", auth_id: "a", error: "denied" })).toEqual({
      status: "failed",
      auth_id: "a",
      error: "denied",
    });
    expect(WaitResult.safeParse({ status: "connection_required", auth_id: "a" }).success).toBe(false);
  });
});
