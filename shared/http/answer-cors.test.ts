import { describe, expect, it } from "vitest";
import { NotFound } from "../errors.ts";
import { corsPolicy, DEFAULT_CORS } from "./cors.ts";
import type { HttpEvent } from "./event.ts";
import { defineHandler } from "./handler.ts";

// Routes whose answers no gateway decorates (a deployment's public agent routes in AWS) carry CORS headers from
// the handler itself, errors included; only a browser's requests (an Origin) get them.
const event = (headers: Record<string, string>, path = "/ok"): HttpEvent =>
  ({
    version: "2.0",
    routeKey: `GET ${path}`,
    rawPath: path,
    rawQueryString: "",
    headers,
    requestContext: { http: { method: "GET", path }, requestId: "r" },
    isBase64Encoded: false,
  }) as unknown as HttpEvent;

const restricted = corsPolicy({ allow_origins: ["https://app.example"] });
const ok = defineHandler(
  { handle: async () => ({ ok: true }) },
  () => false,
  async () => DEFAULT_CORS,
);
const fails = defineHandler(
  {
    handle: async () => {
      throw new NotFound("Deployment not found");
    },
  },
  () => false,
  async () => restricted,
);
const none = defineHandler(
  { handle: async () => ({ ok: true }) },
  () => false,
  () => undefined,
);

describe("answerCors", () => {
  it("adds Allow-Origin and the exposed headers to a browser's answer", async () => {
    const r = await ok(event({ origin: "https://any.example" }));
    expect(r.statusCode).toBe(200);
    expect(r.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "content-location,x-pagination-total,retry-after",
    });
    expect((await ok(event({}))).headers?.["access-control-allow-origin"]).toBeUndefined();
  });

  it("errors too, with the deployment's policy", async () => {
    const r = await fails(event({ origin: "https://app.example" }));
    expect(r.statusCode).toBe(404);
    expect(r.headers?.["access-control-allow-origin"]).toBe("https://app.example");
    const other = await fails(event({ origin: "https://other.example" }));
    expect(other.headers?.["access-control-allow-origin"]).toBeUndefined();
  });

  it("no policy: nothing added (a gateway in front answers CORS)", async () => {
    expect(
      (await none(event({ origin: "https://app.example" }))).headers?.["access-control-allow-origin"],
    ).toBeUndefined();
  });
});
