import { describe, expect, it, vi } from "vitest";

// The AWS router's CORS: preflights answered before any authentication with the deployment's policy; a refused
// request (no API key) carries the headers too. The records are mocked: no DynamoDB here.
vi.mock("../../shared/records/control.ts", () => ({
  deploymentById: async (id: string) =>
    id === "restricted" ? { id, cors: { allow_origins: ["https://app.example"] } } : undefined,
  recentDeploymentRecord: async () => undefined,
}));
vi.mock("../../shared/auth/api-keys.ts", async () => {
  const { Unauthorized } = await import("../../shared/errors.ts");
  return {
    authenticate: async () => {
      throw new Unauthorized("Missing API key");
    },
    withoutApiKey: (h: unknown) => h,
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
