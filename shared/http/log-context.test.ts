import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { httpEvent, okIsPublic } from "../../test/helpers/http-events.ts";
import { logger } from "../log.ts";
import { defineHandler, reply } from "./handler.ts";

// Every line logged while a request is handled carries its request id and route (and the tenant once
// authenticated), from whichever module writes it; concurrent requests keep their own.
let lines: Record<string, unknown>[] = [];
beforeEach(() => {
  lines = [];
  const capture = (s: string | Uint8Array) => {
    lines.push(JSON.parse(String(s)));
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(capture);
  vi.spyOn(process.stderr, "write").mockImplementation(capture);
});
// Info lines are what these tests read, whatever LOG_LEVEL the run has (the integration setup lowers it).
beforeEach(() => {
  vi.stubEnv("LOG_LEVEL", "info");
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const logged = (msg: string) => lines.find((l) => l.msg === msg);
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Domain code: knows nothing of requests, logs through the module logger after some async work. */
async function domainWork(item: string, delayMs: number): Promise<string> {
  await tick(delayMs);
  logger.info("domain work done", { item });
  return item;
}

const withRequestId = (id: string, init: Parameters<typeof httpEvent>[0] = {}) => {
  const e = httpEvent(init);
  e.requestContext.requestId = id;
  return e;
};

describe("log context", () => {
  it("a line logged by a domain function inside a handler carries the request id and route", async () => {
    const h = defineHandler({ handle: async () => ({ item: await domainWork("a", 1) }) }, okIsPublic);
    const r = await h(withRequestId("req-a"));
    expect(r.statusCode).toBe(200);
    const line = logged("domain work done");
    expect(line).toMatchObject({ request_id: "req-a", route: "GET /ok", item: "a" });
    expect(line).not.toHaveProperty("tenant_id");
  });

  it("two concurrent requests do not mix their contexts", async () => {
    const h = defineHandler(
      {
        handle: async ({ requestId }) => ({
          item: await domainWork(requestId, requestId === "req-1" ? 30 : 1),
        }),
      },
      okIsPublic,
    );
    // req-1 starts first and logs last, after req-2 began and finished.
    await Promise.all([h(withRequestId("req-1")), h(withRequestId("req-2"))]);
    const done = lines.filter((l) => l.msg === "domain work done");
    expect(done.map((l) => [l.item, l.request_id])).toEqual([
      ["req-2", "req-2"],
      ["req-1", "req-1"],
    ]);
  });

  it("outside a request a line carries no request fields", () => {
    logger.info("idle");
    expect(lines[0]).not.toHaveProperty("request_id");
    expect(lines[0]).not.toHaveProperty("route");
  });

  it("a streamed reply's chunks are produced in its request's context, after the handler returned", async () => {
    async function* chunks() {
      await domainWork("chunk", 1);
      yield "data: 1\n\n";
    }
    const h = defineHandler({ handle: () => reply.stream(chunks()) }, okIsPublic);
    const r = await h(withRequestId("req-s"));
    logger.info("between");
    for await (const _ of r.stream!);
    expect(logged("between")).not.toHaveProperty("request_id");
    expect(logged("domain work done")).toMatchObject({
      request_id: "req-s",
      route: "GET /ok",
    });
  });

  it("an authenticated request's lines carry its tenant; secrets stay redacted", async () => {
    const h = defineHandler(
      {
        handle: async () => {
          logger.info("with a secret", { api_key: "sk-live-123" });
          return {};
        },
      },
      () => "router",
    );
    const e = withRequestId("req-t", { routeKey: "GET /private" });
    (e.requestContext as { authorizer?: unknown }).authorizer = { lambda: { tenant_id: "t-1" } };
    expect((await h(e)).statusCode).toBe(200);
    expect(logged("with a secret")).toMatchObject({
      request_id: "req-t",
      route: "GET /private",
      tenant_id: "t-1",
      api_key: "[redacted]",
    });
    expect(JSON.stringify(lines)).not.toContain("sk-live-123");
  });
});
