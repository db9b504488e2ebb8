import { describe, expect, it } from "vitest";
import { containedHeaders, HTML_SANDBOX, isPassive, redirectLeaves, singleValued } from "./answer-headers.ts";

const shared = (headers: Record<string, string | string[]>) =>
  containedHeaders(headers, { sharedOrigin: true });
const own = (headers: Record<string, string | string[]>) =>
  containedHeaders(headers, { sharedOrigin: false });
const sandboxed = (h: ReturnType<typeof shared>) =>
  [h["content-security-policy"]].flat().includes(HTML_SANDBOX) && h["x-content-type-options"] === "nosniff";

describe("a runtime's answer headers", () => {
  it("never carry Service-Worker-Allowed, on any origin", () => {
    for (const sharedOrigin of [true, false])
      expect(
        containedHeaders(
          { "Service-Worker-Allowed": "/", "content-type": "application/json" },
          { sharedOrigin },
        )["service-worker-allowed"],
      ).toBeUndefined();
  });

  it("put an active document in a CSP sandbox on the shared origin, beside the deployment's own policy", () => {
    expect(
      shared({ "content-type": "text/html; charset=utf-8", "content-security-policy": "default-src 'self'" }),
    ).toEqual({
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": ["default-src 'self'", HTML_SANDBOX],
      "x-content-type-options": "nosniff",
    });
  });

  it("sandbox every answer on the shared origin whose one Content-Type is not on the passive list", () => {
    for (const type of [
      "text/plain, text/html",
      "application/json, text/html",
      "text/xsl",
      "image/svg+xml",
      "application/xhtml+xml",
      "text/javascript",
      "html",
      "text/plain;,text/html",
      'text/plain; a="x,text/html"',
      "text/plain\u000b",
      "\u00a0text/plain",
      "",
    ])
      expect(sandboxed(shared({ "content-type": type })), JSON.stringify(type)).toBe(true);
    expect(sandboxed(shared({})), "no Content-Type").toBe(true);
  });

  it("sandbox repeated Content-Type headers, in any casing, even when each is passive", () => {
    expect(sandboxed(shared({ "Content-Type": "text/plain", "content-type": "text/html" }))).toBe(true);
    expect(sandboxed(shared({ "content-type": ["text/plain", "text/plain"] }))).toBe(true);
  });

  it("leave passive answers unsandboxed, with nosniff, on the shared origin", () => {
    for (const type of [
      "application/json",
      "application/json; charset=utf-8",
      "application/problem+json",
      "text/event-stream",
      "Text/Plain; charset=UTF-8",
      "image/png",
      "image/jpeg",
      "image/gif",
      "image/webp",
      "image/avif",
    ]) {
      expect(shared({ "content-type": type }), type).toEqual({
        "content-type": type,
        "x-content-type-options": "nosniff",
      });
      expect(isPassive([type])).toBe(true);
    }
  });

  it("remove every Set-Cookie (and Clear-Site-Data) on the shared origin", () => {
    const h = shared({
      "content-type": "application/json",
      "Set-Cookie": ["a=1; Path=/", "b=2"],
      "clear-site-data": '"storage"',
    });
    expect(h["set-cookie"]).toBeUndefined();
    expect(h["clear-site-data"]).toBeUndefined();
  });

  it("remove Refresh on the shared origin (a console tab sent anywhere), and hop-by-hop headers everywhere", () => {
    const h = shared({ "content-type": "application/json", Refresh: "0; url=https://example.com/" });
    expect(h.refresh).toBeUndefined();
    expect(own({ "content-type": "text/html", refresh: "5" }).refresh).toBe("5");
    for (const at of [shared, own]) {
      const out = at({
        "content-type": "application/json",
        Connection: "keep-alive, X-Private",
        "Keep-Alive": "timeout=5",
        "Transfer-Encoding": "chunked",
        Upgrade: "websocket",
        "x-private": "named by Connection",
        "x-kept": "1",
      });
      for (const gone of ["connection", "keep-alive", "transfer-encoding", "upgrade", "x-private"])
        expect(out[gone], gone).toBeUndefined();
      expect(out["x-kept"]).toBe("1");
    }
  });

  it("keep host-only cookies at a deployment's own origin and remove those with a Domain attribute", () => {
    const h = own({
      "content-type": "application/json",
      "set-cookie": [
        "host=1; Path=/; HttpOnly",
        "wide=1; Domain=localhost",
        "sneaky=1; Path=/;  DOMAIN =.localhost",
        "joined=1; Path=/, other=2; domain=example.dev",
      ],
    });
    expect(h["set-cookie"]).toBe("host=1; Path=/; HttpOnly");
    expect(own({ "Set-Cookie": "x=1; Domain=a" })["set-cookie"]).toBeUndefined();
  });

  it("leave a deployment's own origin's content types to the deployment", () => {
    expect(own({ "content-type": "text/html" })).toEqual({ "content-type": "text/html" });
  });

  it("let no header name set the answer's prototype", () => {
    const h = shared(JSON.parse('{"__proto__": "x", "content-type": "application/json"}'));
    expect(Object.getPrototypeOf(h)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(h, "__proto__")?.value).toBe("x");
  });
});

describe("headers with one value each (Lambda's streamed answer)", () => {
  it("joins the policies of a header into one comma list, each still enforced", () => {
    expect(
      singleValued({
        "content-security-policy": ["default-src 'self'", HTML_SANDBOX],
        "x-n": 1,
        gone: undefined,
      }),
    ).toEqual({ "content-security-policy": `default-src 'self', ${HTML_SANDBOX}`, "x-n": "1" });
  });
});

describe("a redirect of a request that carried a platform key", () => {
  const shared = { host: "platform.test:8080", prefix: "/agents/d1" };
  const own = { host: "d1.agents.test:8080", prefix: "" };
  const leaves = (location: string | string[], place = shared, status = 307) =>
    redirectLeaves(status, { Location: location }, place);

  it("may stay within the deployment: a relative path, its own prefix, its own origin", () => {
    expect(leaves("./next")).toBe(false);
    expect(leaves("/agents/d1/threads")).toBe(false);
    expect(leaves("/agents/d1")).toBe(false);
    expect(leaves("http://platform.test:8080/agents/d1/x?y=1")).toBe(false);
    expect(leaves("/anything/at/all", own)).toBe(false);
    expect(leaves("https://d1.agents.test:8080/x", own)).toBe(false);
  });

  it("leaves: another host, scheme-relative or backslashed forms, another scheme, credentials", () => {
    for (const to of [
      "http://collector.test/steal",
      "//collector.test/steal",
      "/\\collector.test/steal",
      "\\\\collector.test/steal",
      "javascript:alert(1)",
      "http://user:pw@platform.test:8080/agents/d1/x",
      "http://platform.test/agents/d1/x",
    ])
      expect(leaves(to), to).toBe(true);
    expect(leaves("http://collector.test/", own)).toBe(true);
  });

  it("leaves: the platform's own API on the shared origin, by dot segments or escaped separators too", () => {
    for (const to of [
      "/v2/deployments",
      "/agents/d2/threads",
      "/agents/d1x/threads",
      "../../v2/deployments",
      "/agents/d1/../../v2/deployments",
      "/agents/d1/%2e%2e/%2e%2e/v2/deployments",
      "/agents/d1/..%2f..%2fv2/deployments",
    ])
      expect(leaves(to), to).toBe(true);
  });

  it("two Locations leave; a Location on a status no client follows is left alone", () => {
    expect(redirectLeaves(302, { location: ["./a", "//collector.test/"] }, shared)).toBe(true);
    expect(leaves("http://collector.test/", shared, 201)).toBe(false);
    expect(redirectLeaves(307, {}, shared)).toBe(false);
  });
});
