import { describe, expect, it, vi } from "vitest";

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
vi.mock("../../shared/records/control.ts", () => ({
  recentDeploymentById: async (id: string) =>
    id === "restricted"
      ? { id, cors: { allow_origins: ["https://app.example"] } }
      : id === "custom"
        ? CUSTOM
        : undefined,
  recentDeploymentRecord: async (tenant: string, id: string) =>
    tenant === CUSTOM.tenant_id && id === CUSTOM.id ? CUSTOM : undefined,
}));
const invoked: { FunctionName?: string; Qualifier?: string; Payload?: Uint8Array }[] = [];
vi.mock("../../shared/aws/clients.ts", () => ({
  lambda: () => ({
    send: async (cmd: { input: { FunctionName?: string; Qualifier?: string; Payload?: Uint8Array } }) => {
      invoked.push(cmd.input);
      const prelude = `${JSON.stringify({ statusCode: 200, headers: { "content-type": "application/json" } })}\n[]`;
      return { EventStream: [{ PayloadChunk: { Payload: Buffer.from(prelude) } }] };
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
const { handler } = (await import("./router.ts")) as unknown as {
  handler: (e: unknown, s: unknown) => Promise<void>;
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
      "access-control-expose-headers": "content-location,x-pagination-total",
    });
  });
});

describe("the agent router with custom auth (AWS)", () => {
  it("passes a request without a platform key to the deployment's runtime as custom, headers intact", async () => {
    invoked.length = 0;
    const a = await routerAnswer(restEvent("POST", "custom", { authorization: "Bearer end-user" }));
    expect(a.statusCode).toBe(200);
    expect(invoked).toHaveLength(1);
    expect(invoked[0]!.Qualifier).toBe("7");
    const payload = JSON.parse(Buffer.from(invoked[0]!.Payload!).toString());
    expect(payload).toMatchObject({ kind: "http", tenant_id: "t-1", auth: "custom" });
    expect(payload.event.headers.authorization).toBe("Bearer end-user");
  });

  it("a deployment without custom auth still answers 401 without a key, invoking nothing", async () => {
    invoked.length = 0;
    const a = await routerAnswer(restEvent("POST", "open", { authorization: "Bearer end-user" }));
    expect(a.statusCode).toBe(401);
    expect(invoked).toHaveLength(0);
  });
});

describe("the agent router's rate limit (AWS)", () => {
  it("a workspace over its limit gets 429 with Retry-After, its error shape and CORS; the runtime is not invoked", async () => {
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
      });
      expect(JSON.parse(a.body)).toEqual({ detail: expect.stringMatching(/rate limit/i) });
      expect(invoked).toHaveLength(0);
    } finally {
      windowFull = false;
    }
  });
});
