import { describe, expect, it } from "vitest";
import { TokenEndpointError } from "../errors.ts";
import { parseTokenResponse, tokenRequest } from "./client.ts";

const JSON_TYPE = "application/json";

describe("parseTokenResponse", () => {
  it("reads a JSON grant: token, refresh token, expiry, granted scopes", () => {
    const out = parseTokenResponse(
      200,
      JSON_TYPE,
      JSON.stringify({
        access_token: "at",
        refresh_token: "rt",
        token_type: "bearer",
        expires_in: "3600",
        scope: "a b",
      }),
    );
    expect(out).toEqual({
      access_token: "at",
      refresh_token: "rt",
      token_type: "bearer",
      expires_in: 3600,
      scopes: ["a", "b"],
    });
  });

  it("reads a form-encoded grant (GitHub's default) and comma-separated scopes", () => {
    const out = parseTokenResponse(
      200,
      "application/x-www-form-urlencoded; charset=utf-8",
      "access_token=at&scope=repo%2Cuser",
    );
    expect(out).toEqual({ access_token: "at", scopes: ["repo", "user"] });
  });

  it("an OAuth error is a rejection, even in a 200 answer", () => {
    for (const status of [200, 400, 401]) {
      const out = parseTokenResponse(
        status,
        JSON_TYPE,
        '{"error":"invalid_grant","error_description":"bad code"}',
      );
      expect(out).toBeInstanceOf(TokenEndpointError);
      expect(out).toMatchObject({ rejected: true, message: "invalid_grant: bad code" });
    }
  });

  it("a 5xx, a non-token body or a missing access_token is an unusable endpoint, not a rejection", () => {
    expect(parseTokenResponse(503, "text/html", "<h1>down</h1>")).toMatchObject({
      rejected: false,
      message: /HTTP 503/,
    });
    expect(parseTokenResponse(200, "text/html", "<h1>hi</h1>")).toMatchObject({ rejected: false });
    expect(parseTokenResponse(200, JSON_TYPE, '{"token_type":"bearer"}')).toMatchObject({
      rejected: false,
      message: /without an access_token/,
    });
  });

  it("keeps provider text printable and short", () => {
    const out = parseTokenResponse(400, JSON_TYPE, JSON.stringify({ error: `x\u0000\n${"y".repeat(1000)}` }));
    expect((out as TokenEndpointError).message).toMatch(/^x\?\?y+$/);
    expect((out as TokenEndpointError).message.length).toBeLessThanOrEqual(300);
  });

  it("ignores an expiry that is not a positive number", () => {
    for (const expires_in of [-5, 0, "soon", null, Number.NaN])
      expect(parseTokenResponse(200, JSON_TYPE, JSON.stringify({ access_token: "a", expires_in }))).toEqual({
        access_token: "a",
      });
  });
});

describe("tokenRequest: client authentication per token_endpoint_auth_method", () => {
  const base = { tokenUrl: "https://idp/token", clientId: "my id", clientSecret: "s:e&c" };
  const params = { grant_type: "authorization_code", code: "c" };

  it("client_secret_post sends id and secret in the form", () => {
    const r = tokenRequest({ ...base, method: "client_secret_post" }, params);
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({
      ...params,
      client_id: "my id",
      client_secret: "s:e&c",
    });
    expect(r.headers.authorization).toBeUndefined();
  });

  it("client_secret_basic sends them form-encoded in HTTP Basic, not in the form", () => {
    const r = tokenRequest({ ...base, method: "client_secret_basic" }, params);
    const decoded = Buffer.from(r.headers.authorization.replace(/^Basic /, ""), "base64").toString();
    expect(decoded).toBe("my%20id:s%3Ae%26c");
    expect(new URLSearchParams(r.body).has("client_secret")).toBe(false);
    expect(new URLSearchParams(r.body).has("client_id")).toBe(false);
  });

  it("none sends only the client id", () => {
    const r = tokenRequest({ ...base, method: "none" }, params);
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({ ...params, client_id: "my id" });
  });
});
