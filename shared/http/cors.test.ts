import { describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH } from "../safe-regex.ts";
import {
  corsHeaders,
  corsPolicy,
  DEFAULT_CORS,
  MAX_ORIGIN_LENGTH,
  preflightResult,
  withCors,
} from "./cors.ts";

const browser = { origin: "https://app.example" };
const preflightAsks = {
  ...browser,
  "access-control-request-method": "POST",
  "access-control-request-headers": "x-api-key, content-type",
};

describe("CORS as the reference server answers it", () => {
  it("defaults: any origin, hono's methods, the asked headers, content-location exposed", () => {
    expect(preflightResult(DEFAULT_CORS, preflightAsks)).toEqual({
      statusCode: 204,
      headers: {
        "access-control-allow-origin": "*",
        "access-control-expose-headers": "content-location,x-pagination-total,retry-after",
        "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH",
        "access-control-allow-headers": "x-api-key,content-type",
        vary: "Access-Control-Request-Headers",
      },
    });
    expect(corsHeaders(DEFAULT_CORS, "POST", browser)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "content-location,x-pagination-total,retry-after",
    });
    // A preflight that asks for no header gets no Allow-Headers (and no Vary for it).
    expect(corsHeaders(DEFAULT_CORS, "OPTIONS", browser)).not.toHaveProperty("access-control-allow-headers");
  });

  it("http.cors: listed origins echoed with Vary: Origin, others get no Allow-Origin", () => {
    const policy = corsPolicy({ allow_origins: ["https://app.example"] });
    expect(corsHeaders(policy, "OPTIONS", preflightAsks)).toMatchObject({
      "access-control-allow-origin": "https://app.example",
      "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH",
      vary: "Origin, Access-Control-Request-Headers",
    });
    const other = corsHeaders(policy, "GET", { origin: "https://evil.example" });
    expect(other).not.toHaveProperty("access-control-allow-origin");
    expect(other["access-control-expose-headers"]).toBe("content-location,x-pagination-total,retry-after");
    expect(corsHeaders(policy, "GET", {})).not.toHaveProperty("access-control-allow-origin");
  });

  it("the regex matches whole origins; the list and the regex both allow", () => {
    const policy = corsPolicy({
      allow_origins: ["http://localhost:3000"],
      allow_origin_regex: "https://[a-z]+\\.app\\.example",
    });
    expect(policy.allowOrigin("https://preview.app.example")).toBe("https://preview.app.example");
    expect(policy.allowOrigin("https://preview.app.example.evil.com")).toBeUndefined();
    expect(policy.allowOrigin("http://localhost:3000")).toBe("http://localhost:3000");
    expect(policy.allowOrigin("http://localhost:3001")).toBeUndefined();
  });

  it("an Origin longer than MAX_ORIGIN_LENGTH is allowed by nothing, the regex is not even tried", () => {
    const long = `https://${"a".repeat(MAX_ORIGIN_LENGTH)}.app.example`;
    const policy = corsPolicy({
      allow_origins: [long],
      allow_origin_regex: "https://[a-z]+\\.app\\.example",
    });
    expect(policy.allowOrigin(long)).toBeUndefined();
    expect(corsPolicy({ allow_origins: ["*"], allow_credentials: true }).allowOrigin(long)).toBeUndefined();
    expect(policy.allowOrigin("https://b.app.example")).toBe("https://b.app.example");
  });

  it("a regex of the longest accepted length still works", () => {
    const [head, tail] = ["https://(", "|b)\\.example"];
    const source = `${head}${"x".repeat(MAX_PATTERN_LENGTH - head.length - tail.length)}${tail}`;
    expect(source.length).toBe(MAX_PATTERN_LENGTH);
    expect(corsPolicy({ allow_origin_regex: source }).allowOrigin("https://b.example")).toBe(
      "https://b.example",
    );
  });

  it("an unsafe regex kept in an older record matches nothing, and a hostile Origin is answered at once", () => {
    const policy = corsPolicy({ allow_origin_regex: "(a+)+$" });
    expect(policy.allowOrigin("aaaa")).toBeUndefined();
    expect(policy.allowOrigin(`${"a".repeat(MAX_ORIGIN_LENGTH - 1)}!`)).toBeUndefined();
  });

  it("methods, headers, credentials, max age and exposed headers as configured (the SDK's two added)", () => {
    const policy = corsPolicy({
      allow_origins: ["*"],
      allow_methods: ["get", "POST"],
      allow_headers: ["x-api-key", "content-type"],
      allow_credentials: true,
      expose_headers: ["X-Request-Id", "Content-Location"],
      max_age: 600,
    });
    expect(
      corsHeaders(policy, "OPTIONS", { ...preflightAsks, "access-control-request-headers": "x-other" }),
    ).toEqual({
      // With credentials a browser refuses "*": the origin is echoed.
      "access-control-allow-origin": "https://app.example",
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": "X-Request-Id,Content-Location,x-pagination-total,retry-after",
      "access-control-max-age": "600",
      "access-control-allow-methods": "GET,POST",
      "access-control-allow-headers": "x-api-key,content-type",
      vary: "Origin, Access-Control-Request-Headers",
    });
    expect(corsPolicy({ allow_origins: ["*"] }).allowOrigin("https://x.example")).toBe("*");
  });

  it("merges into a response's own headers, Vary appended", () => {
    expect(
      withCors(
        { "Content-Type": "application/json", Vary: "Accept", "access-control-allow-origin": "x" },
        {
          "access-control-allow-origin": "https://app.example",
          vary: "Origin",
        },
      ),
    ).toEqual({
      "Content-Type": "application/json",
      Vary: "Accept, Origin",
      "access-control-allow-origin": "https://app.example",
    });
  });
});
