import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../errors.ts";
import { authRequest } from "../runtime/custom-auth.ts";
import {
  type AuthHandlers,
  authConfigurable,
  authFailure,
  authorize,
  matchesAuthFilters,
  metadataOfFilters,
  OPERATOR,
  runAs,
  toAuthUser,
} from "./scope.ts";

const alice = toAuthUser({ identity: "alice", permissions: ["read"], org: "acme" });

describe("authorize picks the handler as the reference does", () => {
  const seen: string[] = [];
  const handlers: AuthHandlers = {
    callbacks: {
      "threads:create": () => {
        seen.push("threads:create");
        return { owner: "exact" };
      },
      threads: () => {
        seen.push("threads");
        return { owner: "resource" };
      },
      "*:search": () => {
        seen.push("*:search");
        return true;
      },
      "*": () => {
        seen.push("*");
        return false;
      },
    },
  };
  const as = <T>(fn: () => Promise<T>) => runAs(alice, handlers, fn);

  it("resource:action, then resource, then *:action, then *", async () => {
    expect(await as(() => authorize("threads:create", {}))).toEqual({ owner: "exact" });
    expect(await as(() => authorize("threads:read", {}))).toEqual({ owner: "resource" });
    expect(await as(() => authorize("crons:search", {}))).toBeUndefined();
    await expect(as(() => authorize("crons:delete", {}))).rejects.toMatchObject({ status: 403 });
    expect(seen).toEqual(["threads:create", "threads", "*:search", "*"]);
  });

  it("without custom auth (no identity) everything is allowed and unscoped", async () => {
    expect(await authorize("threads:delete", {})).toBeUndefined();
    expect(authConfigurable()).toEqual({});
  });

  it("the handler sees the user, its permissions and the value it may change", async () => {
    const value: Record<string, unknown> = { metadata: {} };
    const h: AuthHandlers = {
      callbacks: {
        "*": (req) => {
          expect(req).toMatchObject({ event: "threads:create", resource: "threads", action: "create" });
          expect(req.permissions).toEqual(["read"]);
          (req.value as { metadata: Record<string, unknown> }).metadata.owner = req.user.identity;
        },
      },
    };
    await runAs(alice, h, () => authorize("threads:create", value));
    expect(value).toEqual({ metadata: { owner: "alice" } });
  });

  it("a handler that throws is a 403, or the status of its HTTPException", async () => {
    const boom: AuthHandlers = {
      callbacks: {
        threads: () => {
          throw new Error("bug");
        },
        crons: () => {
          throw Object.assign(new Error("Not your plan"), { status: 402 });
        },
      },
    };
    await expect(runAs(alice, boom, () => authorize("threads:read", {}))).rejects.toMatchObject({
      status: 403,
    });
    await expect(runAs(alice, boom, () => authorize("crons:read", {}))).rejects.toMatchObject({
      status: 402,
      message: "Not your plan",
    });
  });

  it("the run's config carries the user as the reference passes it", () => {
    expect(runAs(alice, {}, () => authConfigurable())).toEqual({
      langgraph_auth_user: {
        identity: "alice",
        display_name: "alice",
        is_authenticated: true,
        permissions: ["read"],
        org: "acme",
      },
      langgraph_auth_user_id: "alice",
      langgraph_auth_permissions: ["read"],
    });
    expect(runAs(OPERATOR, {}, () => authConfigurable()).langgraph_auth_user_id).toBe(
      "langgraph-studio-user",
    );
  });
});

describe("users and failures", () => {
  it("a string or an object with identity is a user; anything else is refused", () => {
    expect(toAuthUser("bob")).toEqual({
      identity: "bob",
      display_name: "bob",
      is_authenticated: true,
      permissions: [],
    });
    expect(toAuthUser({ identity: "x", display_name: "X", permissions: ["a", 1] }).permissions).toEqual([
      "a",
      "1",
    ]);
    for (const bad of [null, undefined, "", 3, {}, { identity: 3 }]) expect(() => toAuthUser(bad)).toThrow();
  });

  it("an error is the status it carries (4xx/5xx), else the fallback", () => {
    expect(authFailure(Object.assign(new Error("no"), { status: 401 }), 403)).toMatchObject({
      status: 401,
      message: "no",
    });
    expect(authFailure(new Error("x"), 401)).toBeInstanceOf(HttpError);
    expect(authFailure(new Error("x"), 401).status).toBe(401);
    expect(authFailure({ status: 200 }, 403).status).toBe(403);
  });
});

describe("filters", () => {
  it("equality, $eq and $contains on metadata", () => {
    const m = { owner: "alice", tags: ["a", "b"], n: 1 };
    expect(matchesAuthFilters(m, undefined)).toBe(true);
    expect(matchesAuthFilters(m, { owner: "alice" })).toBe(true);
    expect(matchesAuthFilters(m, { owner: "bob" })).toBe(false);
    expect(matchesAuthFilters(m, { owner: { $eq: "alice" }, n: 1 })).toBe(true);
    expect(matchesAuthFilters(m, { tags: { $contains: "b" } })).toBe(true);
    expect(matchesAuthFilters(m, { tags: { $contains: "c" } })).toBe(false);
    expect(matchesAuthFilters(m, { owner: { $regex: "." } })).toBe(false);
    expect(matchesAuthFilters(undefined, { owner: "alice" })).toBe(false);
    expect(metadataOfFilters({ owner: "alice", org: { $eq: "acme" }, tags: { $contains: "x" } })).toEqual({
      owner: "alice",
      org: "acme",
    });
  });

  it("never throws, whatever the metadata and filters", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), (metadata, filters) => {
        expect(typeof matchesAuthFilters(metadata, filters)).toBe("boolean");
        expect(typeof metadataOfFilters(filters)).toBe("object");
      }),
    );
  });
});

describe("the request authenticate sees", () => {
  it("the path without /agents/{id}, the query, the client's headers", () => {
    const r = authRequest({
      method: "POST",
      path: "/agents/d-1/threads/search",
      query: "a=1",
      headers: { authorization: "Bearer t", host: "api.example", "x-forwarded-proto": "https" },
    });
    expect(r.method).toBe("POST");
    expect(r.url).toBe("https://api.example/threads/search?a=1");
    expect(r.headers.get("authorization")).toBe("Bearer t");
  });

  it("a path or host that would read as another host or credentials stays a path on a neutral origin", () => {
    expect(new URL(authRequest({ method: "GET", path: "/\\ @&", headers: {} }).url).host).toBe("localhost");
    expect(new URL(authRequest({ method: "GET", path: "//evil.example/x", headers: {} }).url).host).toBe(
      "localhost",
    );
    const r = authRequest({ method: "GET", path: "/threads", headers: { host: "user:pw@evil.example" } });
    expect(new URL(r.url).host).toBe("localhost");
  });

  it("is built from any path, query and header values without throwing", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.array(fc.string()))),
        (path, query, headers) => {
          expect(authRequest({ method: "GET", path: `/${path}`, query, headers })).toBeInstanceOf(Request);
        },
      ),
    );
  });
});
