import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { okIsPublic } from "../../test/helpers/http-events.ts";
import { setEnvironment } from "../config.ts";
import { defineHandler, reply } from "./handler.ts";
import { toHttpEvent, writeToStream } from "./lambda-front.ts";

// The REST API front of the agent server: v1 events reach v2 handlers, and streaming routes write their
// status, headers and chunks through Lambda's response stream (the runtime's `awslambda` global is the one
// thing not available outside Lambda; a recording stand-in takes its place).
const v1 = (over: Record<string, unknown> = {}) => ({
  httpMethod: "POST",
  resource: "/agents/{deployment_id}/threads/{thread_id}/runs/stream",
  path: "/agents/d1/threads/t1/runs/stream",
  headers: { "X-Api-Key": "k", "Content-Type": "application/json" },
  multiValueHeaders: {},
  queryStringParameters: { wait: "true" },
  multiValueQueryStringParameters: null,
  pathParameters: { deployment_id: "d1", thread_id: "t1" },
  stageVariables: null,
  body: '{"a":1}',
  isBase64Encoded: false,
  requestContext: { requestId: "req-1", domainName: "x.execute-api.eu-west-1.amazonaws.com" },
  ...over,
});

function recorder() {
  const writes: (string | Uint8Array)[] = [];
  const metas: unknown[] = [];
  const listeners: Record<string, () => void> = {};
  const stream = {
    write: (c: string | Uint8Array) => writes.push(c) > 0,
    end: () => {
      writes.push("<end>");
    },
    on: (e: string, fn: () => void) => {
      listeners[e] = fn;
    },
  };
  const lambda = {
    streamifyResponse: (fn: any) => Object.assign(fn, { streamified: true }),
    HttpResponseStream: {
      from: (s: typeof stream, meta: unknown) => {
        metas.push(meta);
        return s;
      },
    },
  };
  return { writes, metas, listeners, stream, lambda };
}

describe("REST (v1) events", () => {
  it("keep every value of a repeated query name (the single-valued map holds only the last)", () => {
    const e = toHttpEvent(
      v1({
        queryStringParameters: { tag: "b", q: "x y" },
        multiValueQueryStringParameters: { tag: ["a", "b"], q: ["x y"] },
      }) as any,
    );
    expect(e.rawQueryString).toBe("tag=a&tag=b&q=x+y");
    expect(e.queryStringParameters).toEqual({ tag: "a,b", q: "x y" });
  });

  it("take query names that are Object.prototype members as ordinary names (a fuzz run found a 500 on ?toString=)", () => {
    const e = toHttpEvent(
      v1({
        queryStringParameters: { toString: "", constructor: "c", __proto__: "p" },
        multiValueQueryStringParameters: JSON.parse(
          '{"toString":["","x"],"constructor":["c"],"__proto__":["p"]}',
        ),
      }) as any,
    );
    expect(e.queryStringParameters?.toString).toBe(",x");
    expect(e.queryStringParameters?.constructor).toBe("c");
    expect(Object.hasOwn(e.queryStringParameters ?? {}, "__proto__")).toBe(true);
    expect(e.rawQueryString).toBe("toString=&toString=x&constructor=c&__proto__=p");
  });

  it("become the v2 shape: route key from method and resource, lower-case headers, params, body", () => {
    const e = toHttpEvent(v1() as any);
    expect(e.routeKey).toBe("POST /agents/{deployment_id}/threads/{thread_id}/runs/stream");
    expect(e.rawPath).toBe("/agents/d1/threads/t1/runs/stream");
    expect(e.headers).toEqual({ "x-api-key": "k", "content-type": "application/json" });
    expect(e.pathParameters).toEqual({ deployment_id: "d1", thread_id: "t1" });
    expect(e.queryStringParameters).toEqual({ wait: "true" });
    expect(e.rawQueryString).toBe("wait=true");
    expect(e.body).toBe('{"a":1}');
    expect(e.requestContext.requestId).toBe("req-1");
  });

  it("leaves v2 events alone", () => {
    const v2 = { version: "2.0", routeKey: "GET /ok", headers: {}, requestContext: { requestId: "r" } };
    expect(toHttpEvent(v2 as any)).toBe(v2);
  });

  it("fuzz: any v1 event gives a 4xx or a 2xx from a validating handler, never a 5xx", async () => {
    const h = defineHandler(
      {
        params: z.object({ id: z.string().max(8) }),
        body: z.object({ n: z.number() }),
        handle: ({ body }) => ({ n: body.n }),
      },
      okIsPublic,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })),
        fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })), { nil: null }),
        fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })), { nil: null }),
        fc.option(fc.oneof(fc.string({ maxLength: 60 }), fc.json({ maxDepth: 3 })), { nil: null }),
        fc.boolean(),
        async (headers, query, params, body, base64) => {
          // GET /ok is a public route: what is fuzzed is the event translation and validation, not auth.
          const r = await h(
            v1({
              httpMethod: "GET",
              resource: "/ok",
              headers,
              queryStringParameters: query,
              pathParameters: params,
              body: base64 && body ? Buffer.from(body).toString("base64") : body,
              isBase64Encoded: base64,
            }) as any,
          );
          expect(r.statusCode).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("response streaming", () => {
  const savedLambda = (globalThis as any).awslambda;
  let restoreEnv = () => {};
  afterEach(() => {
    restoreEnv();
    if (savedLambda === undefined) delete (globalThis as any).awslambda;
    else (globalThis as any).awslambda = savedLambda;
  });

  async function* sse() {
    yield "event: metadata\ndata: {}\n\n";
    yield 'event: values\ndata: {"x":1}\n\n';
  }

  it("writes status and headers first, then each chunk, then ends", async () => {
    const r = recorder();
    await writeToStream(
      { statusCode: 200, headers: { "content-type": "text/event-stream" }, body: "", stream: sse() },
      r.stream,
      r.lambda,
    );
    expect(r.metas).toEqual([{ statusCode: 200, headers: { "content-type": "text/event-stream" } }]);
    expect(r.writes).toEqual(["event: metadata\ndata: {}\n\n", 'event: values\ndata: {"x":1}\n\n', "<end>"]);
  });

  it("tells the handler when the client leaves before the end", async () => {
    const r = recorder();
    let aborted = 0;
    async function* forever() {
      yield "event: a\n\n";
      r.listeners.close?.();
      yield "event: b\n\n";
    }
    await writeToStream(
      { statusCode: 200, headers: {}, body: "", stream: forever(), onAbort: () => aborted++ },
      r.stream,
      r.lambda,
    );
    expect(aborted).toBe(1);
  });

  it("a streaming route's handler is streamified inside Lambda, and still answers a v1 event", async () => {
    const r = recorder();
    restoreEnv = setEnvironment({ LAMBDA_RESPONSE_STREAMING: "1" });
    (globalThis as any).awslambda = r.lambda;
    const h: any = defineHandler(
      {
        handle: () => reply.stream(sse(), { "content-type": "text/event-stream" }),
      },
      okIsPublic,
    );
    expect(h.streamified).toBe(true);
    await h(v1({ httpMethod: "GET", resource: "/ok", path: "/ok" }), r.stream, {});
    expect(r.metas).toEqual([{ statusCode: 200, headers: { "content-type": "text/event-stream" } }]);
    expect(r.writes.at(-1)).toBe("<end>");
    expect(r.writes).toHaveLength(3);
  });

  it("a validation error on a streaming route is written as the 422 JSON body", async () => {
    const r = recorder();
    restoreEnv = setEnvironment({ LAMBDA_RESPONSE_STREAMING: "1" });
    (globalThis as any).awslambda = r.lambda;
    const h: any = defineHandler(
      {
        body: z.object({ n: z.number() }),
        handle: () => reply.stream(sse()),
      },
      okIsPublic,
    );
    await h(v1({ httpMethod: "GET", resource: "/ok", path: "/ok", body: '{"n":"x"}' }), r.stream, {});
    expect((r.metas[0] as any).statusCode).toBe(422);
    expect(JSON.parse(String(r.writes[0])).detail[0].loc).toEqual(["body", "n"]);
  });
});
