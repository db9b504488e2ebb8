import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace } from "../harness/export.ts";
import { type Answer, type FakeServer, fakeServer, type Seen } from "../harness/fake-http.ts";
import { conditionalUpdate, getItem, queryAll, queryPage } from "../shared/aws/ddb.ts";
import { base, call } from "./helpers/cloud.ts";

// The auth service over HTTP: providers with a write-only client_secret, the authorization-code flow (PKCE)
// against a token endpoint this test runs on 127.0.0.1, and the token store that never shows token values.
const PROVIDERS = "/v2/auth/providers";
const SECRET = "client-secret-never-shown-7f3a";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let other: Awaited<ReturnType<typeof newWorkspace>>;
let idp: FakeServer;
let issued = 0;
/** What the token endpoint answers next; by default a fresh grant. */
let next: ((req: Seen) => Answer) | undefined;

beforeAll(async () => {
  [ws, other] = await Promise.all([newWorkspace(), newWorkspace()]);
  idp = await fakeServer((req) => {
    if (next) return next(req);
    issued++;
    return {
      status: 200,
      body: {
        access_token: `at-${issued}`,
        refresh_token: `rt-${issued}`,
        token_type: "bearer",
        expires_in: 3600,
      },
    };
  });
});
afterAll(() => idp?.close());

const form = (s: Seen) => Object.fromEntries(new URLSearchParams(s.body));
const slug = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

function provider(over: Record<string, unknown> = {}) {
  return {
    provider_id: slug("gh"),
    name: "GitHub",
    client_id: "client-1",
    client_secret: SECRET,
    auth_url: "https://idp.example.com/authorize?audience=x",
    token_url: `${idp.url}/token`,
    uses_pkce: true,
    token_endpoint_auth_method: "client_secret_basic",
    scopes: ["repo"],
    ...over,
  };
}
async function createProvider(over: Record<string, unknown> = {}, headers = ws.headers) {
  const r = await call("POST", PROVIDERS, { headers, body: provider(over) });
  expect(r.status, r.text).toBe(200);
  return r.json;
}
/** compat-notes: authenticate answers these four statuses and no other. */
const AUTHENTICATE_STATUSES = ["completed", "pending", "connection_required", "token_expired"];
async function authenticate(body: Record<string, unknown>, headers = ws.headers, prefix = "") {
  const r = await call("POST", `${prefix}/v2/auth/authenticate`, { headers, body });
  if (r.status === 200) expect(AUTHENTICATE_STATUSES).toContain(r.json.status);
  return r;
}
/** The browser's side: follow the provider's redirect to our callback (no API key). */
function callback(providerId: string, params: Record<string, string>, prefix = "") {
  return call("GET", `${prefix}/v2/auth/callback/${providerId}?${new URLSearchParams(params)}`);
}
const exists = (providerId: string, headers = ws.headers) =>
  call("GET", `/v2/auth/tokens/exists?provider_id=${providerId}`, { headers });

/** Starts a flow (a new one: `connection_required` unless told) and answers the authorization URL's parameters. */
async function startFlow(
  providerId: string,
  body: Record<string, unknown> = {},
  prefix = "",
  status = "connection_required",
) {
  const r = await authenticate({ provider: providerId, ...body }, ws.headers, prefix);
  expect(r.status, r.text).toBe(200);
  expect(r.json.status).toBe(status);
  const url = new URL(r.json.url);
  return { authId: r.json.auth_id as string, url, q: Object.fromEntries(url.searchParams) };
}

describe("OAuth providers", () => {
  it("creates a provider; client_secret is sealed, never returned", async () => {
    const body = provider({ uses_pkce: undefined, token_endpoint_auth_method: undefined, scopes: undefined });
    const r = await call("POST", PROVIDERS, { headers: ws.headers, body });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organization_id: ws.tenant,
      provider_id: body.provider_id,
      name: "GitHub",
      client_id: "client-1",
      auth_url: body.auth_url,
      token_url: body.token_url,
      uses_pkce: false,
      code_challenge_method: "S256",
      token_endpoint_auth_method: "client_secret_post",
      scopes: null,
      provider_type: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await call("GET", `${PROVIDERS}/${body.provider_id}`, { headers: ws.headers });
    const list = await call("GET", PROVIDERS, { headers: ws.headers });
    expect(got.json).toEqual(r.json);
    expect(list.json).toContainEqual(r.json);
    for (const text of [r.text, got.text, list.text]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('"client_secret"');
      expect(text).not.toContain("sealed");
    }
    const item = await getItem("main", { PK: `T#${ws.tenant}#OAUTHPROVIDER`, SK: body.provider_id });
    expect(item?.client_secret_sealed).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(SECRET);
  });

  it("provider_id is unique per workspace (409), not across workspaces", async () => {
    const p = await createProvider();
    const again = await call("POST", PROVIDERS, {
      headers: ws.headers,
      body: provider({ provider_id: p.provider_id }),
    });
    expect(again.status).toBe(409);
    await createProvider({ provider_id: p.provider_id }, other.headers);
  });

  it("PATCH updates fields and replaces the secret; provider_id cannot change", async () => {
    const p = await createProvider();
    const r = await call("PATCH", `${PROVIDERS}/${p.provider_id}`, {
      headers: ws.headers,
      body: {
        name: "Renamed",
        client_secret: "new-secret",
        uses_pkce: false,
        scopes: ["a", "b"],
        client_id: null,
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      name: "Renamed",
      uses_pkce: false,
      scopes: ["a", "b"],
      client_id: "client-1",
    });
    expect(r.text).not.toContain("new-secret");
    const moved = await call("PATCH", `${PROVIDERS}/${p.provider_id}`, {
      headers: ws.headers,
      body: { provider_id: "x" },
    });
    expect(moved.status).toBe(422);
  });

  it("DELETE removes the provider and its tokens; unknown and other workspaces' providers are 404s", async () => {
    const p = await createProvider({ uses_pkce: false });
    const { q } = await startFlow(p.provider_id);
    expect((await callback(p.provider_id, { code: "c", state: q.state })).status).toBe(200);
    expect((await exists(p.provider_id)).json).toEqual({ has_token: true });
    for (const method of ["GET", "PATCH", "DELETE"])
      expect(
        (
          await call(method, `${PROVIDERS}/${p.provider_id}`, {
            headers: other.headers,
            body: method === "PATCH" ? {} : undefined,
          })
        ).status,
      ).toBe(404);
    const del = await call("DELETE", `${PROVIDERS}/${p.provider_id}`, { headers: ws.headers });
    expect(del.status).toBe(200);
    expect(del.json.message).toMatch(/deleted/);
    expect((await call("GET", `${PROVIDERS}/${p.provider_id}`, { headers: ws.headers })).status).toBe(404);
    expect((await call("DELETE", `${PROVIDERS}/${p.provider_id}`, { headers: ws.headers })).status).toBe(404);
    expect((await exists(p.provider_id)).json).toEqual({ has_token: false });
    expect((await authenticate({ provider: p.provider_id })).status).toBe(404);
  });

  it("bad bodies are 422s", async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ provider_id: "has space" }, ["body", "provider_id"]],
      [{ name: undefined }, ["body", "name"]],
      [{ token_url: "ftp://idp/token" }, ["body", "token_url"]],
      [{ token_url: "not a url" }, ["body", "token_url"]],
      [{ auth_url: "javascript:alert(1)" }, ["body", "auth_url"]],
      [{ token_endpoint_auth_method: "private_key_jwt" }, ["body", "token_endpoint_auth_method"]],
      [{ code_challenge_method: "S512" }, ["body", "code_challenge_method"]],
      [{ client_secret: undefined }, ["body", "client_secret"]],
      [{ scopes: ["has space"] }, ["body", "scopes", 0]],
    ];
    for (const [over, loc] of cases) {
      const r = await call("POST", PROVIDERS, { headers: ws.headers, body: provider(over) });
      expect(r.status, JSON.stringify(over)).toBe(422);
      expect(r.json.detail[0].loc).toEqual(loc);
    }
    // A public client needs no secret.
    await createProvider({ client_secret: undefined, token_endpoint_auth_method: "none" });
  });
});

describe("authorization-code flow", () => {
  it("PKCE + client_secret_basic: exists false → authenticate → callback → wait completed → exists true", async () => {
    const p = await createProvider();
    expect((await exists(p.provider_id)).json).toEqual({ has_token: false });
    const { authId, url, q } = await startFlow(p.provider_id, { scopes: ["repo", "read:user"] });
    expect(url.origin + url.pathname).toBe("https://idp.example.com/authorize");
    expect(q).toEqual({
      audience: "x",
      response_type: "code",
      client_id: "client-1",
      redirect_uri: `${base}/v2/auth/callback/${p.provider_id}`,
      state: expect.any(String),
      scope: "repo read:user",
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
    });
    const pending = await call("GET", `/v2/auth/wait/${authId}?timeout=0`, { headers: ws.headers });
    expect(pending.json).toEqual({ status: "timeout", auth_id: authId });

    const waiting = call("GET", `/v2/auth/wait/${authId}?timeout=20`, { headers: ws.headers });
    const before = idp.seen.length;
    const cb = await callback(p.provider_id, { code: "the-code", state: q.state });
    expect(cb.status, cb.text).toBe(200);
    expect(cb.json).toMatchObject({
      status: "completed",
      auth_id: authId,
      message: expect.stringMatching(/close this window/),
    });

    const [exchange] = idp.seen.slice(before);
    expect(exchange.path).toBe("/token");
    expect(exchange.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const f = form(exchange);
    expect(f).toEqual({
      grant_type: "authorization_code",
      code: "the-code",
      redirect_uri: q.redirect_uri,
      code_verifier: expect.any(String),
    });
    expect(createHash("sha256").update(f.code_verifier).digest("base64url")).toBe(q.code_challenge);
    expect(exchange.headers.authorization).toBe(
      `Basic ${Buffer.from(`client-1:${SECRET}`).toString("base64")}`,
    );

    const done = await waiting;
    expect(done.status).toBe(200);
    const token = done.json.token as string;
    expect(done.json).toEqual({
      status: "completed",
      auth_id: authId,
      token: expect.stringMatching(/^at-\d+$/),
      token_id: expect.any(String),
      expires_at: expect.any(String),
      scopes: ["repo", "read:user"],
    });
    expect(done.text).not.toMatch(/rt-\d+/);
    expect((await exists(p.provider_id)).json).toEqual({ has_token: true });

    // A usable token answers at once, without a new flow or a token endpoint call.
    const calls = idp.seen.length;
    const again = await authenticate({ provider: p.provider_id, scopes: ["repo"] });
    expect(again.json).toEqual({
      status: "completed",
      token,
      token_id: done.json.token_id,
      expires_at: done.json.expires_at,
      scopes: ["repo", "read:user"],
    });
    expect(idp.seen.length).toBe(calls);
    // force, or a scope the token lacks, starts a new flow.
    expect((await authenticate({ provider: p.provider_id, force: true })).json.status).toBe(
      "connection_required",
    );
    expect((await authenticate({ provider: p.provider_id, scopes: ["admin"] })).json.status).toBe(
      "connection_required",
    );

    // The state is single-use.
    const replay = await callback(p.provider_id, { code: "the-code", state: q.state });
    expect(replay.status).toBe(400);
    expect(idp.seen.length).toBe(calls);

    // Stored sealed: the record holds no token value.
    const item = await getItem("main", { PK: `T#${ws.tenant}#OAUTHTOKEN`, SK: `${p.provider_id}#` });
    expect(JSON.stringify(item)).not.toContain(token);
    expect(JSON.stringify(item)).not.toMatch(/rt-\d+/);
  });

  it("client_secret_post sends id and secret in the form; no PKCE means no verifier", async () => {
    const p = await createProvider({ uses_pkce: false, token_endpoint_auth_method: "client_secret_post" });
    const { q } = await startFlow(p.provider_id);
    expect(q.code_challenge).toBeUndefined();
    expect(q.scope).toBe("repo");
    const before = idp.seen.length;
    expect((await callback(p.provider_id, { code: "c2", state: q.state })).status).toBe(200);
    const [exchange] = idp.seen.slice(before);
    expect(form(exchange)).toEqual({
      grant_type: "authorization_code",
      code: "c2",
      redirect_uri: q.redirect_uri,
      client_id: "client-1",
      client_secret: SECRET,
    });
    expect(exchange.headers.authorization).toBeUndefined();
  });

  it("token_endpoint_auth_method none sends only the client id", async () => {
    const p = await createProvider({ client_secret: undefined, token_endpoint_auth_method: "none" });
    const { q } = await startFlow(p.provider_id);
    const before = idp.seen.length;
    expect((await callback(p.provider_id, { code: "c3", state: q.state })).status).toBe(200);
    const f = form(idp.seen[before]);
    expect(f.client_id).toBe("client-1");
    expect(f.client_secret).toBeUndefined();
    expect(f.code_verifier).toEqual(expect.any(String));
  });

  it("keeps the /api-host prefix in redirect_uri, and the callback answers there", async () => {
    const p = await createProvider();
    const { authId, q } = await startFlow(p.provider_id, {}, "/api-host");
    expect(q.redirect_uri).toBe(`${base}/api-host/v2/auth/callback/${p.provider_id}`);
    expect((await callback(p.provider_id, { code: "c", state: q.state }, "/api-host")).status).toBe(200);
    const done = await call("GET", `/api-host/v2/auth/wait/${authId}`, { headers: ws.headers });
    expect(done.json.status).toBe("completed");
  });

  it("a user's token is that user's: user_id scopes authenticate and exists", async () => {
    const p = await createProvider({ uses_pkce: false });
    const { q } = await startFlow(p.provider_id, { user_id: "alice" });
    expect((await callback(p.provider_id, { code: "c", state: q.state })).status).toBe(200);
    const e = (user: string) =>
      call("GET", `/v2/auth/tokens/exists?provider_id=${p.provider_id}&user_id=${user}`, {
        headers: ws.headers,
      });
    expect((await e("alice")).json).toEqual({ has_token: true });
    expect((await e("bob")).json).toEqual({ has_token: false });
    expect((await exists(p.provider_id)).json).toEqual({ has_token: true });
    expect((await authenticate({ provider: p.provider_id, user_id: "bob" })).json.status).toBe(
      "connection_required",
    );
    expect((await authenticate({ provider: p.provider_id, user_id: "alice" })).json.status).toBe("completed");
  });
});

describe("callback failures", () => {
  it("bad, unknown, other-provider or already used state is a 400", async () => {
    const p = await createProvider();
    const { q } = await startFlow(p.provider_id);
    const [t, flow, s] = q.state.split(".");
    // A tampered signature: its first character changed (the last one's low bits are base64 padding, so
    // changing it may leave the signature's bytes as they were).
    const tampered = `${t}.${flow}.${s[0] === "A" ? "B" : "A"}${s.slice(1)}`;
    for (const state of ["", "garbage", `${t}.${UNKNOWN}.${s}`, tampered]) {
      const r = await callback(p.provider_id, { code: "c", state });
      expect(r.status, state).toBe(400);
      expect(r.json.detail).toMatch(/state/);
    }
    expect((await callback(slug("other"), { code: "c", state: q.state })).status).toBe(400);
    expect((await call("GET", `/v2/auth/callback/${p.provider_id}`)).status).toBe(400);
    // The flow survived the bad attempts.
    expect((await callback(p.provider_id, { code: "c", state: q.state })).status).toBe(200);
  });

  it("an expired flow is a 400, and wait says expired", async () => {
    const p = await createProvider();
    const { authId, q } = await startFlow(p.provider_id);
    await conditionalUpdate(
      "main",
      { PK: `T#${ws.tenant}#OAUTHFLOW`, SK: authId },
      { set: { expires_at: Math.floor(Date.now() / 1000) - 1 } },
    );
    expect((await callback(p.provider_id, { code: "c", state: q.state })).status).toBe(400);
    expect((await call("GET", `/v2/auth/wait/${authId}`, { headers: ws.headers })).json).toEqual({
      status: "expired",
      auth_id: authId,
    });
  });

  it("the provider's error redirect fails the flow with its reason (400)", async () => {
    const p = await createProvider();
    const { authId, q } = await startFlow(p.provider_id);
    const r = await callback(p.provider_id, {
      error: "access_denied",
      error_description: "user said no",
      state: q.state,
    });
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/access_denied/);
    const w = await call("GET", `/v2/auth/wait/${authId}`, { headers: ws.headers });
    expect(w.json).toEqual({
      status: "failed",
      auth_id: authId,
      error: "authorization denied: access_denied: user said no",
    });
  });

  it("a token endpoint rejection is a 400, a broken one a 502; the flow record says why", async () => {
    const p = await createProvider();
    const cases: [Answer, number, RegExp][] = [
      [
        { status: 400, body: { error: "invalid_grant", error_description: "code expired" } },
        400,
        /invalid_grant: code expired/,
      ],
      [{ status: 200, body: { error: "bad_verification_code" } }, 400, /bad_verification_code/],
      [{ status: 503, body: "<html>down</html>", type: "text/html" }, 502, /HTTP 503/],
      [{ status: 200, body: { token_type: "bearer" } }, 502, /without an access_token/],
    ];
    try {
      for (const [answer, status, why] of cases) {
        next = () => answer;
        const { authId, q } = await startFlow(p.provider_id);
        const r = await callback(p.provider_id, { code: "c", state: q.state });
        expect(r.status, JSON.stringify(answer)).toBe(status);
        expect(r.json.detail).toMatch(why);
        const w = await call("GET", `/v2/auth/wait/${authId}`, { headers: ws.headers });
        expect(w.json).toMatchObject({ status: "failed", error: expect.stringMatching(why) });
      }
    } finally {
      next = undefined;
    }
    expect((await exists(p.provider_id)).json).toEqual({ has_token: false });
  });

  it("an unreachable token endpoint is a 502", async () => {
    const p = await createProvider({ token_url: "http://127.0.0.1:9/token" });
    const { authId, q } = await startFlow(p.provider_id);
    const r = await callback(p.provider_id, { code: "c", state: q.state });
    expect(r.status).toBe(502);
    expect(r.json.detail).toMatch(/unreachable/);
    expect((await call("GET", `/v2/auth/wait/${authId}`, { headers: ws.headers })).json.status).toBe(
      "failed",
    );
  });
});

describe("tokens", () => {
  it("lists metadata only, deletes by id (204), and other workspaces see nothing", async () => {
    const p = await createProvider();
    const { authId, q } = await startFlow(p.provider_id);
    await callback(p.provider_id, { code: "c", state: q.state });
    const done = await call("GET", `/v2/auth/wait/${authId}`, { headers: ws.headers });
    const list = await call("GET", `/v2/auth/tokens?provider_id=${p.provider_id}`, { headers: ws.headers });
    expect(list.status).toBe(200);
    expect(list.json).toEqual([
      {
        id: done.json.token_id,
        provider_id: p.provider_id,
        user_id: null,
        scopes: ["repo"],
        expires_at: expect.any(String),
        has_refresh_token: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(list.text).not.toContain(done.json.token);
    expect(list.text).not.toMatch(/rt-\d+/);
    const all = await call("GET", "/v2/auth/tokens", { headers: ws.headers });
    expect(all.json.map((t: any) => t.id)).toContain(done.json.token_id);
    expect((await call("GET", "/v2/auth/tokens", { headers: other.headers })).json).toEqual([]);

    const path = `/v2/auth/tokens/${done.json.token_id}`;
    expect((await call("DELETE", path, { headers: other.headers })).status).toBe(404);
    expect((await call("DELETE", path, { headers: ws.headers })).status).toBe(204);
    expect((await call("DELETE", path, { headers: ws.headers })).status).toBe(404);
    expect((await exists(p.provider_id)).json).toEqual({ has_token: false });
    expect(
      (await call("GET", `/v2/auth/tokens?provider_id=${p.provider_id}`, { headers: ws.headers })).json,
    ).toEqual([]);
  });

  it("an expired token counts only with a refresh token; authenticate refreshes it", async () => {
    const p = await createProvider({ uses_pkce: false });
    next = () => ({ status: 200, body: { access_token: "short-lived", expires_in: 1 } });
    try {
      const first = await startFlow(p.provider_id);
      await callback(p.provider_id, { code: "c", state: first.q.state });
    } finally {
      next = undefined;
    }
    await new Promise((r) => setTimeout(r, 1200));
    expect((await exists(p.provider_id)).json).toEqual({ has_token: false });
    // Expired without a refresh token: a new flow, and the status says why.
    expect((await authenticate({ provider: p.provider_id })).json).toEqual({
      status: "token_expired",
      url: expect.any(String),
      auth_id: expect.any(String),
    });

    next = () => ({ status: 200, body: { access_token: "old", refresh_token: "refresh-1", expires_in: 1 } });
    try {
      const second = await startFlow(p.provider_id, { force: true });
      await callback(p.provider_id, { code: "c", state: second.q.state });
    } finally {
      next = undefined;
    }
    await new Promise((r) => setTimeout(r, 1200));
    expect((await exists(p.provider_id)).json).toEqual({ has_token: true });
    const before = idp.seen.length;
    const r = await authenticate({ provider: p.provider_id });
    expect(r.json).toMatchObject({ status: "completed", token: expect.stringMatching(/^at-\d+$/) });
    const refresh = idp.seen.slice(before);
    expect(refresh.map(form)).toEqual([{ grant_type: "refresh_token", refresh_token: "refresh-1" }]);
    expect(refresh[0].headers.authorization).toMatch(/^Basic /);
  });
});

describe("authenticate statuses: completed | pending | connection_required | token_expired", () => {
  const flowsOf = async (providerId: string) =>
    (
      await queryAll("main", {
        KeyConditionExpression: "PK = :pk",
        values: { ":pk": `T#${ws.tenant}#OAUTHFLOW` },
      })
    ).filter((f) => f.provider_id === providerId);
  const flowItem = (authId: string) => getItem("main", { PK: `T#${ws.tenant}#OAUTHFLOW`, SK: authId });

  it("connection_required the first time; pending with the same auth_id and url while that flow is open; completed after the callback", async () => {
    const p = await createProvider();
    const first = await authenticate({ provider: p.provider_id, scopes: ["repo", "read:user"] });
    expect(first.json).toEqual({
      status: "connection_required",
      url: expect.stringMatching(/^https:\/\/idp\.example\.com\/authorize\?/),
      auth_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    // The same scope set in another order, repeated: the same flow, not a second one.
    const again = await authenticate({ provider: p.provider_id, scopes: ["read:user", "repo", "repo"] });
    expect(again.json).toEqual({ status: "pending", url: first.json.url, auth_id: first.json.auth_id });
    expect(await flowsOf(p.provider_id)).toHaveLength(1);
    // Another scope set, or another user, needs its own flow.
    expect((await authenticate({ provider: p.provider_id, scopes: ["repo"] })).json.status).toBe(
      "connection_required",
    );
    expect(
      (await authenticate({ provider: p.provider_id, scopes: ["repo", "read:user"], user_id: "carol" })).json
        .status,
    ).toBe("connection_required");

    // The URL is kept sealed: the state's secret is nowhere in clear.
    const state = new URL(first.json.url).searchParams.get("state") as string;
    const stored = await flowItem(first.json.auth_id);
    expect(stored?.url_sealed).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(state.split(".")[2]);

    expect((await callback(p.provider_id, { code: "c", state })).status).toBe(200);
    expect((await flowItem(first.json.auth_id))?.url_sealed).toBeUndefined();
    const done = await authenticate({ provider: p.provider_id, scopes: ["repo", "read:user"] });
    expect(done.json).toEqual({
      status: "completed",
      token: expect.stringMatching(/^at-\d+$/),
      token_id: expect.any(String),
      expires_at: expect.any(String),
      scopes: ["repo", "read:user"],
    });
  });

  it("concurrent calls start one flow: one connection_required, the others pending with its auth_id and url", async () => {
    const p = await createProvider();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => authenticate({ provider: p.provider_id })),
    );
    const statuses = answers.map((a) => a.json.status);
    expect(statuses.filter((s) => s === "connection_required")).toHaveLength(1);
    expect(statuses.filter((s) => s === "pending")).toHaveLength(5);
    expect(new Set(answers.map((a) => a.json.auth_id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.json.url)).size).toBe(1);
    expect(await flowsOf(p.provider_id)).toHaveLength(1);
  });

  it("a flow that expired, is about to, or was denied is not answered again: a new one starts", async () => {
    const p = await createProvider();
    const setExpiry = (authId: string, inSeconds: number) =>
      conditionalUpdate(
        "main",
        { PK: `T#${ws.tenant}#OAUTHFLOW`, SK: authId },
        { set: { expires_at: Math.floor(Date.now() / 1000) + inSeconds } },
      );
    const a = await startFlow(p.provider_id);
    await setExpiry(a.authId, -1);
    const b = await startFlow(p.provider_id);
    expect(b.authId).not.toBe(a.authId);
    await setExpiry(b.authId, 20);
    const c = await startFlow(p.provider_id);
    expect(c.authId).not.toBe(b.authId);
    expect((await callback(p.provider_id, { error: "access_denied", state: c.q.state })).status).toBe(400);
    const d = await startFlow(p.provider_id);
    expect(d.authId).not.toBe(c.authId);
    const again = await startFlow(p.provider_id, {}, "", "pending");
    expect(again.authId).toBe(d.authId);
  });

  it("force: true answers connection_required with a fresh flow, which later calls answer", async () => {
    const p = await createProvider();
    const a = await startFlow(p.provider_id);
    const forced = await startFlow(p.provider_id, { force: true });
    expect(forced.authId).not.toBe(a.authId);
    const again = await startFlow(p.provider_id, {}, "", "pending");
    expect(again.authId).toBe(forced.authId);
    expect(again.url.href).toBe(forced.url.href);
  });

  it("token_expired when the provider refuses the refresh grant; asked again, the same flow without another refresh", async () => {
    const p = await createProvider({ uses_pkce: false });
    next = () => ({ status: 200, body: { access_token: "old", refresh_token: "refresh-x", expires_in: 1 } });
    try {
      const f = await startFlow(p.provider_id);
      expect((await callback(p.provider_id, { code: "c", state: f.q.state })).status).toBe(200);
    } finally {
      next = undefined;
    }
    await new Promise((r) => setTimeout(r, 1200));
    const before = idp.seen.length;
    next = () => ({ status: 400, body: { error: "invalid_grant", error_description: "revoked" } });
    try {
      const r = await authenticate({ provider: p.provider_id });
      expect(r.json).toEqual({
        status: "token_expired",
        url: expect.any(String),
        auth_id: expect.any(String),
      });
      expect(idp.seen.slice(before).map(form)).toEqual([
        { grant_type: "refresh_token", refresh_token: "refresh-x" },
      ]);
      const again = await authenticate({ provider: p.provider_id });
      expect(again.json).toEqual({ status: "pending", url: r.json.url, auth_id: r.json.auth_id });
      expect(idp.seen.length).toBe(before + 1);
    } finally {
      next = undefined;
    }
  });

  it("/openapi.json lists exactly the four statuses for authenticate, and wait's own statuses for wait", async () => {
    const doc = (await call("GET", "/openapi.json")).json;
    const statuses = (path: string, method: string) =>
      doc.paths[path][method].responses["200"].content["application/json"].schema.properties.status.enum;
    expect(statuses("/v2/auth/authenticate", "post")).toEqual(AUTHENTICATE_STATUSES);
    expect(statuses("/v2/auth/wait/{auth_id}", "get")).toEqual([
      "completed",
      "pending",
      "timeout",
      "failed",
      "expired",
    ]);
  });
});

describe("wait and authenticate: validation and isolation", () => {
  it("wait on an unknown or another workspace's flow is a 404; a bad id is a 422", async () => {
    const p = await createProvider();
    const { authId } = await startFlow(p.provider_id);
    expect((await call("GET", `/v2/auth/wait/${authId}`, { headers: other.headers })).status).toBe(404);
    expect((await call("GET", `/v2/auth/wait/${UNKNOWN}`, { headers: ws.headers })).status).toBe(404);
    expect((await call("GET", "/v2/auth/wait/nope", { headers: ws.headers })).status).toBe(422);
    expect((await call("GET", `/v2/auth/wait/${authId}?timeout=x`, { headers: ws.headers })).status).toBe(
      422,
    );
  });

  it("authenticate: another workspace's provider is a 404; bad bodies are 422s", async () => {
    const p = await createProvider();
    expect((await authenticate({ provider: p.provider_id }, other.headers)).status).toBe(404);
    for (const [body, loc] of [
      [{}, ["body", "provider"]],
      [{ provider: "a b" }, ["body", "provider"]],
      [{ provider: p.provider_id, scopes: "repo" }, ["body", "scopes"]],
      [{ provider: p.provider_id, force: "yes" }, ["body", "force"]],
    ] as const) {
      const r = await authenticate(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0].loc).toEqual(loc);
    }
    expect((await call("DELETE", "/v2/auth/tokens/nope", { headers: ws.headers })).status).toBe(422);
  });

  it("token exists answers an `Authorization: Bearer <api key>` caller with X-Tenant-Id", async () => {
    const key = ws.headers["X-Api-Key"];
    const r = await call("GET", "/v2/auth/tokens/exists?provider_id=gh", {
      headers: { Authorization: `Bearer ${key}`, "X-Tenant-Id": ws.tenant },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ has_token: false });
    const bad = await call("GET", "/v2/auth/tokens/exists?provider_id=gh", {
      headers: { Authorization: "Bearer nope" },
    });
    expect(bad.status).toBe(401);
  });

  it("flow records expire through the table's TTL attribute", async () => {
    const p = await createProvider();
    const { authId } = await startFlow(p.provider_id);
    const flow = await getItem("main", { PK: `T#${ws.tenant}#OAUTHFLOW`, SK: authId });
    const now = Math.floor(Date.now() / 1000);
    expect(flow?.expires_at).toBeGreaterThan(now + 590);
    expect(flow?.expires_at).toBeLessThanOrEqual(now + 601);
    expect(JSON.stringify(flow)).not.toMatch(/"code_verifier"|"state"/);
    const page = await queryPage("main", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": `T#${ws.tenant}#OAUTHFLOW` },
    });
    expect(page.items.every((i) => typeof i.expires_at === "number")).toBe(true);
  });
});
