import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { httpEvent, okIsPublic } from "../../test/helpers/http-events.ts";
import { NotFound, Unauthorized } from "../errors.ts";
import { defineHandler, reply } from "./handler.ts";

// "GET /ok" is a route without auth (okIsPublic), so these tests need no credentials store.
const echo = defineHandler(
  {
    params: z.object({ id: z.string().uuid() }).partial(),
    query: z.object({ limit: z.coerce.number().int().max(100).optional() }),
    body: z.object({ name: z.string(), tags: z.array(z.string()).optional() }),
    handle: ({ body, query }) => reply(201, { name: body.name, limit: query.limit ?? null }),
  },
  okIsPublic,
);

describe("handler toolkit", () => {
  it("valid input reaches the handler and its reply sets the status", async () => {
    const r = await echo(httpEvent({ body: JSON.stringify({ name: "a" }), query: { limit: "5" } }));
    expect(r.statusCode).toBe(201);
    expect(JSON.parse(r.body!)).toEqual({ name: "a", limit: 5 });
  });

  it("malformed JSON is a 422 with loc [body]", async () => {
    const r = await echo(httpEvent({ body: "{not json" }));
    expect(r.statusCode).toBe(422);
    expect(JSON.parse(r.body!).detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
  });

  it("validation failures of every source are reported together as HTTPValidationError", async () => {
    const r = await echo(
      httpEvent({ body: JSON.stringify({ tags: [1] }), query: { limit: "500" }, params: { id: "x" } }),
    );
    expect(r.statusCode).toBe(422);
    const locs = JSON.parse(r.body!).detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ["path", "id"],
        ["query", "limit"],
        ["body", "name"],
        ["body", "tags", 0],
      ]),
    );
    for (const d of JSON.parse(r.body!).detail) expect(Object.keys(d).sort()).toEqual(["loc", "msg", "type"]);
  });

  it("a missing required field has type missing", async () => {
    const r = await echo(httpEvent({ body: "{}" }));
    expect(JSON.parse(r.body!).detail).toEqual([
      { loc: ["body", "name"], msg: "Field required", type: "missing" },
    ]);
  });

  it("a base64 body is decoded before parsing", async () => {
    const r = await echo(
      httpEvent({ body: Buffer.from(JSON.stringify({ name: "b" })).toString("base64"), base64: true }),
    );
    expect(r.statusCode).toBe(201);
  });

  it("a named error maps to its status with a detail message", async () => {
    const h = defineHandler(
      {
        handle: () => {
          throw new NotFound("Deployment not found");
        },
      },
      okIsPublic,
    );
    const r = await h(httpEvent({}));
    expect(r.statusCode).toBe(404);
    expect(JSON.parse(r.body!)).toEqual({ detail: "Deployment not found" });
  });

  it("an uncaught error is a 500 with request id; the stack goes to the log, never to the client", async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((s) => {
      writes.push(String(s));
      return true;
    });
    const h = defineHandler(
      {
        handle: () => {
          throw new Error("kaboom secret-internal");
        },
      },
      okIsPublic,
    );
    const r = await h(httpEvent({}));
    spy.mockRestore();
    expect(r.statusCode).toBe(500);
    expect(JSON.parse(r.body!)).toEqual({ error: "internal", request_id: "req-1" });
    expect(r.body).not.toContain("kaboom");
    const logged = writes.map((w) => JSON.parse(w)).find((l) => l.msg === "unhandled error");
    expect(logged.request_id).toBe("req-1");
    expect(logged.error.stack).toContain("kaboom");
  });

  it("auth runs before validation: no key on an authenticated route is a 401 even with a bad body", async () => {
    const r = await echo(httpEvent({ routeKey: "GET /v2/auth/tokens/exists", body: "{bad" }));
    expect(r.statusCode).toBe(401);
  });

  it("a keyed route's workspace is the key check's, and the request counts against its rate limit", async () => {
    const admitted: string[] = [];
    const keys = {
      authenticate: async (h: Record<string, string | undefined>) => {
        if (h["x-api-key"] !== "k-1") throw new Unauthorized();
        return "t-1";
      },
      admit: async (tenant: string) => void admitted.push(tenant),
    };
    const h = defineHandler({ handle: ({ tenantId }) => ({ tenantId }) }, undefined, undefined, keys);
    const ok = await h(httpEvent({ routeKey: "GET /private", headers: { "x-api-key": "k-1" } }));
    expect(JSON.parse(ok.body!)).toEqual({ tenantId: "t-1" });
    expect(admitted).toEqual(["t-1"]);
    expect(
      (await h(httpEvent({ routeKey: "GET /private", headers: { "x-api-key": "other" } }))).statusCode,
    ).toBe(401);
    expect(admitted).toEqual(["t-1"]);
  });

  it("204 replies have no body", async () => {
    const h = defineHandler({ handle: () => reply(204) }, okIsPublic);
    const r = await h(httpEvent({}));
    expect(r.statusCode).toBe(204);
    expect(r.body).toBe("");
  });
});
