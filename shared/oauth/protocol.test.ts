import { describe, expect, it } from "vitest";
import { secretHash, secretMatches } from "../crypto/secret-hash.ts";
import {
  authorizationUrl,
  callbackUrl,
  codeChallenge,
  formatState,
  newSecret,
  parseState,
} from "./protocol.ts";

const AUTH_ID = "0b6f7c2e-4a1d-4f8e-9c3b-2d5e6f7a8b9c";

describe("state", () => {
  it("round-trips the tenant, the auth id and the secret", () => {
    const s = { tenantId: "ws-1/ü", authId: AUTH_ID, secret: newSecret() };
    expect(parseState(formatState(s))).toEqual(s);
  });

  it("refuses anything we could not have issued", () => {
    const good = formatState({ tenantId: "t", authId: AUTH_ID, secret: newSecret() });
    const [t, a, s] = good.split(".");
    for (const bad of [
      undefined,
      42,
      "",
      "a.b",
      `${t}.${a}.${s}.x`,
      `${t}.${a.toUpperCase()}.${s}`,
      `${t}.${a}.${s.slice(1)}`,
      `${t}=.${a}.${s}`,
      `.${a}.${s}`,
      `${Buffer.from("\u0001").toString("base64url")}.${a}.${s}`,
      `${"A".repeat(2000)}.${a}.${s}`,
    ])
      expect(parseState(bad), String(bad)).toBeUndefined();
  });

  it("matches a secret to its stored hash only", () => {
    const secret = newSecret();
    expect(secretMatches(secret, secretHash(secret))).toBe(true);
    expect(secretMatches(newSecret(), secretHash(secret))).toBe(false);
    expect(secretMatches(secret, undefined)).toBe(false);
    expect(secretMatches(secret, "abc")).toBe(false);
  });
});

describe("PKCE", () => {
  it("S256 is the unpadded base64url SHA-256 of the verifier; plain is the verifier", async () => {
    const verifier = newSecret();
    const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    expect(codeChallenge(verifier, "S256")).toBe(digest.toString("base64url"));
    expect(codeChallenge(verifier, "S256")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codeChallenge("abc", "plain")).toBe("abc");
  });
});

describe("authorizationUrl", () => {
  it("adds the request parameters and keeps the provider's own", () => {
    const url = new URL(
      authorizationUrl({
        authUrl: "https://idp.example.com/authorize?audience=api",
        clientId: "cid",
        redirectUri: "https://api.example.com/v2/auth/callback/gh",
        state: "st",
        scopes: ["repo", "read:user"],
        codeChallenge: "ch",
        codeChallengeMethod: "S256",
      }),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      audience: "api",
      response_type: "code",
      client_id: "cid",
      redirect_uri: "https://api.example.com/v2/auth/callback/gh",
      state: "st",
      scope: "repo read:user",
      code_challenge: "ch",
      code_challenge_method: "S256",
    });
  });

  it("sends no scope and no challenge when there are none", () => {
    const url = new URL(
      authorizationUrl({ authUrl: "https://idp/a", clientId: "c", redirectUri: "r", state: "s", scopes: [] }),
    );
    expect(url.searchParams.has("scope")).toBe(false);
    expect(url.searchParams.has("code_challenge")).toBe(false);
  });
});

describe("callbackUrl", () => {
  const local = { local: true };
  it("uses the request's host, http in local mode", () => {
    expect(
      callbackUrl({ headers: { host: "127.0.0.1:8080" }, rawPath: "/v2/auth/authenticate" }, "gh", local),
    ).toBe("http://127.0.0.1:8080/v2/auth/callback/gh");
  });

  it("keeps the /api-host prefix when the request came that way", () => {
    expect(
      callbackUrl({ headers: { host: "h" }, rawPath: "/api-host/v2/auth/authenticate" }, "gh", local),
    ).toBe("http://h/api-host/v2/auth/callback/gh");
  });

  it("prefers PUBLIC_BASE_URL, and https outside local mode", () => {
    const origin = { headers: { host: "internal:3000" }, rawPath: "/v2/auth/authenticate" };
    expect(callbackUrl(origin, "gh", { local: false, publicBaseUrl: "https://api.example.com/" })).toBe(
      "https://api.example.com/v2/auth/callback/gh",
    );
    expect(callbackUrl(origin, "gh", { local: false })).toBe("https://internal:3000/v2/auth/callback/gh");
    expect(
      callbackUrl({ ...origin, headers: { ...origin.headers, "x-forwarded-proto": "http" } }, "gh", local),
    ).toBe("http://internal:3000/v2/auth/callback/gh");
  });

  it("falls back to the API's domain when the Host header is malformed", () => {
    expect(
      callbackUrl({ headers: { host: "evil/x?y" }, domainName: "abc.execute-api.aws", rawPath: "/" }, "gh", {
        local: false,
      }),
    ).toBe("https://abc.execute-api.aws/v2/auth/callback/gh");
  });
});
