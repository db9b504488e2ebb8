import { describe, expect, it, vi } from "vitest";
import { HTML_SANDBOX } from "../../shared/agent/runtime/answer-headers.ts";
import { MAX_DRAINS_PER_ANSWER } from "../../shared/agent/runtime/drain-asks.ts";
import { drainLine } from "../../shared/agent/runtime/lambda-protocol.ts";

// The AWS router: CORS preflights answered before any authentication with the deployment's policy; a refused
// request (no API key) carries the headers too; a deployment with custom auth gets requests without a platform
// key, marked "custom" for its runtime; a workspace over its rate limit gets the 429 with Retry-After and CORS,
// invoking nothing. The records, the rate limit's store and Lambda are mocked: no DynamoDB or AWS here.
const CUSTOM = {
  id: "custom",
  tenant_id: "t-1",
  active_revision_id: "rev-1",
  active_runtime_version: "7",
  custom_auth: { disable_studio_auth: false },
};
/** The deployment reads the router made (it reads the one a request names once, for CORS, access and target). */
const reads: string[] = [];
vi.mock("../../shared/records/control.ts", () => ({
  recentDeploymentById: async (id: string) =>
    reads.push(id) && id === "restricted"
      ? { id, cors: { allow_origins: ["https://app.example"] } }
      : id === "custom"
        ? CUSTOM
        : undefined,
}));
interface Invoke {
  FunctionName?: string;
  Qualifier?: string;
  InvocationType?: string;
  Payload?: Uint8Array;
}
/** The runtime invocations (streamed requests, and asynchronous drains). */
const invoked: Invoke[] = [];
/** Invocations of a route's own function (own origins: health, docs, UI files…). */
const functionCalls: Invoke[] = [];
// The headers the runtime answers with (its prelude); a test may set others.
const JSON_ANSWER = { "content-type": "application/json" };
let runtimeHeaders: Record<string, string> = JSON_ANSWER;
const PRELUDE = `${JSON.stringify({ statusCode: 200, headers: JSON_ANSWER })}\n`;
/** The chunks the runtime's answer streams, if a test sets them; else its prelude with runtimeHeaders and `[]`. */
let streamed: string[] | undefined;
/** When set, what InvokeWithResponseStream throws: Lambda's throttle, a fault no local part can cause. */
let throttle: Error | undefined;
/** When set, the runtime's answer: an event stream of its own (one that waits on the call's abort signal). */
let eventStream: ((signal?: AbortSignal) => AsyncIterable<unknown>) | undefined;
vi.mock("../../shared/aws/clients.ts", () => ({
  lambda: () => ({
    send: async (cmd: { input: Invoke }, opts?: { abortSignal?: AbortSignal }) => {
      if (cmd.constructor.name === "InvokeCommand" && cmd.input.InvocationType !== "Event") {
        functionCalls.push(cmd.input);
        const result = { statusCode: 200, headers: { "content-type": "text/html" }, body: "<p>docs</p>" };
        return { Payload: Buffer.from(JSON.stringify(result)) };
      }
      invoked.push(cmd.input);
      if (cmd.input.InvocationType === "Event") return { StatusCode: 202 };
      if (throttle) throw throttle;
      if (eventStream) return { EventStream: eventStream(opts?.abortSignal) };
      const chunks = streamed ?? [`${JSON.stringify({ statusCode: 200, headers: runtimeHeaders })}\n[]`];
      return { EventStream: chunks.map((c) => ({ PayloadChunk: { Payload: Buffer.from(c) } })) };
    },
  }),
}));
vi.mock("../../shared/auth/api-keys.ts", async () => {
  const { Unauthorized } = await import("../../shared/errors.ts");
  return {
    authenticate: async () => {
      throw new Unauthorized("Missing API key");
    },
    withoutPlatformKeys: async (h: unknown) => h,
  };
});

// The workspace's window: full when `windowFull` (the counting itself is tested against DynamoDB Local).
let windowFull = false;
// Keyless calls to a custom-auth deployment count in its end users' buckets (never the owner's workspace).
vi.mock("../../shared/auth/end-user-rate.ts", async () => {
  const { TooManyRequests } = await import("../../shared/errors.ts");
  return {
    EndUserLimiter: class {
      async admit() {
        if (windowFull) throw new TooManyRequests(3, "the deployment's users");
      }
    },
  };
});
vi.mock("../../shared/auth/rate-limit.ts", async () => {
  const { TooManyRequests } = await import("../../shared/errors.ts");
  return {
    admitRequest: async () => {
      if (windowFull) throw new TooManyRequests(3);
    },
  };
});

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

// Lambda's response-streaming globals, as the router finds them when it loads: the answer is recorded.
let answer: Answer | undefined;
(globalThis as Record<string, unknown>).awslambda = {
  streamifyResponse: (fn: unknown) => fn,
  HttpResponseStream: {
    from: (_s: unknown, meta: { statusCode: number; headers: Record<string, string> }) => {
      const a: Answer = { ...meta, body: "" };
      answer = a;
      return {
        write: (c: string) => {
          a.body += c;
        },
        end() {},
        on() {},
      };
    },
  },
};
const { handler, THROTTLE_RETRY_AFTER_SECONDS } = (await import("./router.ts")) as unknown as {
  handler: (e: unknown, s: unknown) => Promise<void>;
  THROTTLE_RETRY_AFTER_SECONDS: number;
};

async function routerAnswer(event: unknown): Promise<Answer> {
  answer = undefined;
  await handler(event, { write() {}, end() {}, on() {} });
  return answer!;
}

const restEvent = (method: string, deployment: string, headers: Record<string, string>) => ({
  httpMethod: method,
  resource: "/agents/{deployment_id}/threads",
  path: `/agents/${deployment}/threads`,
  headers,
  pathParameters: { deployment_id: deployment },
  queryStringParameters: null,
  body: null,
  isBase64Encoded: false,
  requestContext: { requestId: "r" },
});

const preflight = {
  Origin: "https://app.example",
  "Access-Control-Request-Method": "POST",
  "Access-Control-Request-Headers": "x-api-key,content-type",
};

describe("the agent router's CORS (AWS)", () => {
  it("answers a preflight 204 with the defaults, no API key needed", async () => {
    const a = await routerAnswer(restEvent("OPTIONS", "open", preflight));
    expect(a.statusCode).toBe(204);
    expect(a.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH",
      "access-control-allow-headers": "x-api-key,content-type",
    });
  });

  it("answers with the deployment's http.cors: its origin allowed, another not", async () => {
    const ok = await routerAnswer(restEvent("OPTIONS", "restricted", preflight));
    expect(ok.headers["access-control-allow-origin"]).toBe("https://app.example");
    const other = await routerAnswer(
      restEvent("OPTIONS", "restricted", { ...preflight, Origin: "https://other.example" }),
    );
    expect(other.statusCode).toBe(204);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("a 401 carries the headers", async () => {
    const a = await routerAnswer(restEvent("POST", "open", { Origin: "https://app.example" }));
    expect(a.statusCode).toBe(401);
    expect(a.headers).toMatchObject({
      "content-type": "application/json",
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "content-location,x-pagination-total,retry-after",
    });
  });
});

describe("the agent router with custom auth (AWS)", () => {
  it("passes a request without a platform key to the deployment's runtime as custom, headers intact", async () => {
    invoked.length = 0;
    reads.length = 0;
    const a = await routerAnswer(
      restEvent("POST", "custom", { authorization: "Bearer end-user", Origin: "https://app.example" }),
    );
    // One read of the deployment serves the answer's CORS, the access decision and the version invoked.
    expect(reads).toEqual(["custom"]);
    expect(a.statusCode).toBe(200);
    expect(invoked).toHaveLength(1);
    expect(invoked[0]!.Qualifier).toBe("7");
    const payload = JSON.parse(Buffer.from(invoked[0]!.Payload!).toString());
    expect(payload).toMatchObject({ kind: "http", tenant_id: "t-1", auth: "custom" });
    expect(payload.event.headers.authorization).toBe("Bearer end-user");
  });

  it("a body whose event would pass Lambda's 6 MB payload answers 413, invoking nothing", async () => {
    invoked.length = 0;
    // 4 MB of quotes, within the request limit, is 8 MB once escaped in the event.
    const a = await routerAnswer({
      ...restEvent("POST", "custom", { authorization: "Bearer end-user", "content-type": "text/plain" }),
      body: '"'.repeat(4 * 1024 * 1024),
    });
    expect(a.statusCode).toBe(413);
    expect(JSON.parse(a.body).detail).toMatch(/larger than the 6291456 bytes/);
    expect(invoked).toHaveLength(0);
  });

  it("a deployment without custom auth still answers 401 without a key, invoking nothing", async () => {
    invoked.length = 0;
    const a = await routerAnswer(restEvent("POST", "open", { authorization: "Bearer end-user" }));
    expect(a.statusCode).toBe(401);
    expect(invoked).toHaveLength(0);
  });
});

describe("the agent router's rate limit (AWS)", () => {
  it("an end user over the deployment's bucket gets 429 with Retry-After, its error shape and CORS; the runtime is not invoked", async () => {
    invoked.length = 0;
    windowFull = true;
    try {
      const a = await routerAnswer(
        restEvent("POST", "custom", { authorization: "Bearer end-user", Origin: "https://app.example" }),
      );
      expect(a.statusCode).toBe(429);
      expect(a.headers).toMatchObject({
        "content-type": "application/json",
        "retry-after": "3",
        "access-control-allow-origin": "*",
        "access-control-expose-headers": expect.stringContaining("retry-after"),
      });
      expect(JSON.parse(a.body)).toEqual({ detail: expect.stringMatching(/rate limit/i) });
      expect(invoked).toHaveLength(0);
    } finally {
      windowFull = false;
    }
  });
});

// Issue 35: a deployment's runtime at its reserved concurrency (or the account's pool used up) makes Lambda refuse
// the streamed invocation with TooManyRequestsException: the client gets a 429 it can wait out, never a 5xx.
describe("a throttled runtime (AWS)", () => {
  const lambdaThrottle = (retryAfterSeconds?: string) =>
    Object.assign(new Error("Rate Exceeded."), {
      name: "TooManyRequestsException",
      Reason: "ReservedFunctionConcurrentInvocationLimitExceeded",
      ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
    });

  it("answers 429 with Retry-After and CORS when Lambda throttles the streamed invocation", async () => {
    throttle = lambdaThrottle();
    try {
      const a = await routerAnswer(
        restEvent("POST", "custom", { authorization: "Bearer end-user", Origin: "https://app.example" }),
      );
      expect(a.statusCode).toBe(429);
      expect(a.headers).toMatchObject({
        "content-type": "application/json",
        "retry-after": String(THROTTLE_RETRY_AFTER_SECONDS),
        "access-control-allow-origin": "*",
      });
      expect(JSON.parse(a.body)).toEqual({ detail: expect.stringMatching(/deployment's runtime/) });
    } finally {
      throttle = undefined;
    }
  });

  it("passes on the wait Lambda names", async () => {
    throttle = lambdaThrottle("12");
    try {
      const a = await routerAnswer(restEvent("POST", "custom", { authorization: "Bearer end-user" }));
      expect(a.statusCode).toBe(429);
      expect(a.headers["retry-after"]).toBe("12");
    } finally {
      throttle = undefined;
    }
  });

  it("another failure of the invocation is not a 429", async () => {
    throttle = Object.assign(new Error("boom"), { name: "ServiceException" });
    try {
      await expect(
        routerAnswer(restEvent("POST", "custom", { authorization: "Bearer end-user" })),
      ).rejects.toThrow("boom");
    } finally {
      throttle = undefined;
    }
  });
});

// A deployment's own origin in AWS: the wildcard custom domain `*.<AGENT_ORIGIN_DOMAIN>` sends every path of every
// host to the router through one catch-all (`/` and `/{proxy+}`), with the Host it was asked for.
process.env.AGENT_ORIGIN_DOMAIN = "agents.example.com";
const originEvent = (method: string, host: string, path: string, headers: Record<string, string> = {}) => ({
  httpMethod: method,
  resource: path === "/" ? "/" : "/{proxy+}",
  path,
  headers: { Host: host, ...headers },
  pathParameters: path === "/" ? null : { proxy: path.slice(1) },
  queryStringParameters: null,
  body: null,
  isBase64Encoded: false,
  requestContext: { requestId: "r", domainName: host },
});
const sentEvent = () => JSON.parse(Buffer.from(invoked.at(-1)!.Payload!).toString()).event;

describe("a deployment's own origin (AWS: the agent origin domain, routed by Host)", () => {
  it("sends a path at the root of <deployment>.<domain> to that deployment's runtime as its agent route", async () => {
    invoked.length = 0;
    const a = await routerAnswer(originEvent("POST", "custom.agents.example.com", "/threads"));
    expect(a.statusCode).toBe(200);
    expect(invoked).toHaveLength(1);
    expect(invoked[0]).toMatchObject({ FunctionName: "agent-rt-custom", Qualifier: "7" });
    expect(sentEvent()).toMatchObject({
      routeKey: "POST /agents/{deployment_id}/threads",
      rawPath: "/agents/custom/threads",
      pathParameters: { deployment_id: "custom" },
    });
  });

  it("serves custom routes by their absolute paths, and the platform's own paths there are the deployment's", async () => {
    for (const path of ["/custom/route", "/v2/deployments", "/api/v1/runs/query"]) {
      invoked.length = 0;
      await routerAnswer(originEvent("GET", "CUSTOM.agents.example.com:443", path));
      expect(invoked, path).toHaveLength(1);
      expect(sentEvent()).toMatchObject({
        routeKey: "GET /agents/{deployment_id}/{proxy+}",
        rawPath: `/agents/custom${path}`,
        pathParameters: { deployment_id: "custom", proxy: path.slice(1) },
      });
    }
  });

  it("answers the agent routes no runtime serves (health, docs, UI files) from their own functions", async () => {
    invoked.length = 0;
    functionCalls.length = 0;
    process.env.AGENT_ORIGIN_FUNCTIONS = JSON.stringify({
      "agent/system/docs": "fn-docs",
      "agent/ui/asset": "fn-ui",
    });
    try {
      const docs = await routerAnswer(originEvent("GET", "custom.agents.example.com", "/docs"));
      expect(docs).toMatchObject({ statusCode: 200, body: "<p>docs</p>" });
      await routerAnswer(originEvent("GET", "custom.agents.example.com", "/ui/agent/entry.js"));
      expect(functionCalls.map((c) => c.FunctionName)).toEqual(["fn-docs", "fn-ui"]);
      const sent = JSON.parse(Buffer.from(functionCalls[1]!.Payload!).toString());
      expect(sent).toMatchObject({
        routeKey: "GET /agents/{deployment_id}/ui/{name}/{file}",
        rawPath: "/agents/custom/ui/agent/entry.js",
        pathParameters: { deployment_id: "custom", name: "agent", file: "entry.js" },
      });
      expect(invoked).toHaveLength(0);
      // A route whose function the stack did not name is a 502, never another route's answer.
      expect((await routerAnswer(originEvent("GET", "custom.agents.example.com", "/ok"))).statusCode).toBe(
        502,
      );
    } finally {
      delete process.env.AGENT_ORIGIN_FUNCTIONS;
    }
  });

  it("answers 404 where no deployment is named: another host on the catch-all, or the origin's bare root", async () => {
    invoked.length = 0;
    for (const host of [
      "agents.example.com",
      "x.y.agents.example.com",
      "custom.agents.example.com.evil.test",
    ])
      expect((await routerAnswer(originEvent("GET", host, "/threads/t"))).statusCode, host).toBe(404);
    expect((await routerAnswer(originEvent("GET", "custom.agents.example.com", "/"))).statusCode).toBe(404);
    expect(invoked).toHaveLength(0);
  });

  it("answers a preflight there with the deployment's CORS policy", async () => {
    const a = await routerAnswer(
      originEvent("OPTIONS", "restricted.agents.example.com", "/threads", preflight),
    );
    expect(a.statusCode).toBe(204);
    expect(a.headers["access-control-allow-origin"]).toBe("https://app.example");
  });
});

describe("a runtime's answer headers through the router (AWS), as the local gateway passes them", () => {
  const page = { "Content-Type": "text/html; charset=utf-8", "Service-Worker-Allowed": "/" };

  it("never carry Service-Worker-Allowed, on either origin", async () => {
    runtimeHeaders = page;
    try {
      for (const event of [
        restEvent("GET", "custom", { authorization: "Bearer end-user" }),
        originEvent("GET", "custom.agents.example.com", "/page", { authorization: "Bearer end-user" }),
      ]) {
        const a = await routerAnswer(event);
        expect(a.statusCode).toBe(200);
        expect(Object.keys(a.headers).map((k) => k.toLowerCase())).not.toContain("service-worker-allowed");
      }
    } finally {
      runtimeHeaders = JSON_ANSWER;
    }
  });

  it("put HTML in a CSP sandbox on the shared origin (/agents/{id}), beside the deployment's own policy", async () => {
    runtimeHeaders = { ...page, "Content-Security-Policy": "default-src 'self'" };
    try {
      const a = await routerAnswer(restEvent("GET", "custom", { authorization: "Bearer end-user" }));
      expect(a.headers["content-security-policy"]).toBe(`default-src 'self', ${HTML_SANDBOX}`);
      expect(a.headers["x-content-type-options"]).toBe("nosniff");
    } finally {
      runtimeHeaders = JSON_ANSWER;
    }
  });

  it("leave HTML at the deployment's own origin to the deployment (its runtime applies langgraph.json's choice)", async () => {
    runtimeHeaders = page;
    try {
      const a = await routerAnswer(
        originEvent("GET", "custom.agents.example.com", "/page", { authorization: "Bearer end-user" }),
      );
      expect(a.headers["content-security-policy"]).toBeUndefined();
      expect(a.headers["content-type"]).toBe("text/html; charset=utf-8");
    } finally {
      runtimeHeaders = JSON_ANSWER;
    }
  });
});

describe("a runtime's malformed answer (AWS and local)", () => {
  it("a status past 599 or a header that is no string is the deployment's fault: 502, never the router's 500", async () => {
    for (const head of [
      { statusCode: 999, headers: JSON_ANSWER },
      { statusCode: 200, headers: { "x-n": 1 } },
      { statusCode: "200", headers: {} },
    ]) {
      streamed = [`${JSON.stringify(head)}\n{}`];
      try {
        const a = await routerAnswer(restEvent("GET", "custom", { authorization: "Bearer end-user" }));
        expect(a.statusCode, JSON.stringify(head)).toBe(502);
        expect(JSON.parse(a.body).detail).toMatch(/malformed/);
      } finally {
        streamed = undefined;
      }
    }
  });
});

describe("drains the runtime's answer asks for (AWS)", () => {
  const drains = () =>
    invoked
      .filter((i) => i.InvocationType === "Event")
      .map((i) => JSON.parse(Buffer.from(i.Payload!).toString()));

  it("invokes the version that served the request once per thread asked, for this tenant and deployment; the client gets the answer only", async () => {
    invoked.length = 0;
    // Asks may arrive split across chunks, repeated, and in the prelude's chunk.
    streamed = [
      `${drainLine("th-1")}${drainLine("th-2").slice(0, 5)}`,
      `${drainLine("th-2").slice(5)}${drainLine("th-1")}`,
      `${drainLine("th-3")}${PRELUDE}[`,
      "]",
    ];
    try {
      const a = await routerAnswer(restEvent("POST", "custom", { authorization: "Bearer end-user" }));
      expect(a.statusCode).toBe(200);
      expect(a.body).toBe("[]");
      expect(drains()).toEqual(
        ["th-1", "th-2", "th-3"].map((thread_id) => ({
          kind: "drain",
          tenant_id: "t-1",
          deployment_id: "custom",
          thread_id,
        })),
      );
      const kicks = invoked.filter((i) => i.InvocationType === "Event");
      for (const k of kicks) expect(k).toMatchObject({ FunctionName: "agent-rt-custom", Qualifier: "7" });
    } finally {
      streamed = undefined;
    }
  });

  it("starts at most MAX_DRAINS_PER_ANSWER drains for one answer, and none for a malformed ask", async () => {
    invoked.length = 0;
    const asks = Array.from({ length: MAX_DRAINS_PER_ANSWER + 50 }, (_, i) => drainLine(`th-${i}`)).join("");
    streamed = [`${JSON.stringify({ drain: 7 })}\n${JSON.stringify({ drain: "" })}\n${asks}${PRELUDE}[]`];
    try {
      const a = await routerAnswer(restEvent("POST", "custom", { authorization: "Bearer end-user" }));
      expect(a.statusCode).toBe(200);
      expect(drains()).toHaveLength(MAX_DRAINS_PER_ANSWER);
      expect(drains()[0].thread_id).toBe("th-0");
    } finally {
      streamed = undefined;
    }
  });
});

describe("a client that leaves (AWS and local)", () => {
  it("aborts the runtime's invocation, so its stream ends too (on_disconnect=cancel), and the router returns", async () => {
    let leave: (() => void) | undefined;
    let aborted = false;
    eventStream = (signal) =>
      (async function* () {
        yield { PayloadChunk: { Payload: Buffer.from(`${PRELUDE}data: 1\n\n`) } };
        // The runtime streams on until its invocation is cut.
        await new Promise<void>((_, reject) =>
          signal?.addEventListener("abort", () => {
            aborted = true;
            reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
          }),
        );
      })();
    try {
      const done = handler(restEvent("POST", "custom", { authorization: "Bearer end-user" }), {
        write() {},
        end() {},
        on(event: string, fn: () => void) {
          if (event === "close") leave = fn;
        },
      });
      await vi.waitFor(() => expect(answer?.body).toBe("data: 1\n\n"));
      leave?.();
      await expect(done).resolves.toBeUndefined();
      expect(aborted).toBe(true);
    } finally {
      eventStream = undefined;
    }
  });
});
