import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { httpEvent, okIsPublic } from "../../test/helpers/http-events.ts";
import { withLogContext } from "../log.ts";
import type { HttpEvent, HttpResult } from "./event.ts";
import { defineHandler } from "./handler.ts";
import {
  auth,
  httpErrorHandler,
  jsonBodyParser,
  logContext,
  type ToolkitContext,
  validator,
} from "./middlewares.ts";

// The toolkit's middlewares compose like middy's own: each does one thing and hands on what it found.
// Info lines are what these tests read, whatever LOG_LEVEL the run has (the integration setup lowers it).
beforeEach(() => {
  vi.stubEnv("LOG_LEVEL", "info");
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("handler middlewares", () => {
  it("compose on a plain middy handler: parsed, validated input on the context", async () => {
    const seen: unknown[] = [];
    const h = middy(async (_event: HttpEvent, context: ToolkitContext): Promise<HttpResult> => {
      seen.push(context.input, context.tenantId);
      return { statusCode: 200, body: "" };
    }).use([
      logContext(),
      httpErrorHandler(),
      auth(okIsPublic),
      jsonBodyParser(),
      validator({ query: z.object({ n: z.coerce.number() }), body: z.object({ a: z.string() }) }),
    ]);
    const r = await h(httpEvent({ query: { n: "2" }, body: '{"a":"x"}' }), {} as Context);
    expect(r.statusCode).toBe(200);
    expect(seen).toEqual([{ params: undefined, query: { n: 2 }, body: { a: "x" } }, ""]);
  });

  it("the handler sees the request's event as it came, none of the middlewares' findings", async () => {
    let event: unknown;
    const h = defineHandler(
      {
        body: z.object({ a: z.string() }),
        handle: (ctx) => {
          event = ctx.event;
          return {};
        },
      },
      okIsPublic,
    );
    const e = httpEvent({ body: '{"a":"x"}' });
    await h(e);
    expect(event).toEqual(httpEvent({ body: '{"a":"x"}' }));
  });

  it("an unhandled error's log line carries the request's context; the 500 names the invocation without an API Gateway id", async () => {
    const lines: Record<string, unknown>[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => lines.push(JSON.parse(String(s))) > 0);
    const h = defineHandler(
      {
        handle: () => {
          throw new Error("boom");
        },
      },
      okIsPublic,
    );
    const e = httpEvent({});
    Object.assign(e.requestContext, { requestId: undefined });
    const r = await withLogContext({ outer: true }, () => h(e, { awsRequestId: "inv-9" }));
    expect(JSON.parse(r.body!)).toEqual({ error: "internal", request_id: "inv-9" });
    expect(lines[0]).toMatchObject({ msg: "unhandled error", request_id: "inv-9", route: "GET /ok" });
    expect(lines[0]).not.toHaveProperty("outer");
  });
});
