import { describe, expect, it } from "vitest";
import { containedHeaders, HTML_SANDBOX, isActiveDocument, singleValued } from "./answer-headers.ts";

describe("a runtime's answer headers", () => {
  it("never carry Service-Worker-Allowed, on any origin", () => {
    for (const sharedOrigin of [true, false])
      expect(
        containedHeaders(
          { "Service-Worker-Allowed": "/", "content-type": "text/javascript" },
          { sharedOrigin },
        ),
      ).toEqual({ "content-type": "text/javascript" });
  });

  it("put an active document in a CSP sandbox on the shared origin, beside the deployment's own policy", () => {
    expect(
      containedHeaders(
        { "content-type": "text/html; charset=utf-8", "content-security-policy": "default-src 'self'" },
        { sharedOrigin: true },
      ),
    ).toEqual({
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": ["default-src 'self'", HTML_SANDBOX],
      "x-content-type-options": "nosniff",
    });
    for (const type of ["image/svg+xml", "application/xhtml+xml", "text/xml", "", undefined])
      expect(isActiveDocument(type)).toBe(true);
  });

  it("leave passive answers and a deployment's own origin as they are", () => {
    expect(containedHeaders({ "content-type": "application/json" }, { sharedOrigin: true })).toEqual({
      "content-type": "application/json",
    });
    expect(containedHeaders({ "content-type": "text/html" }, { sharedOrigin: false })).toEqual({
      "content-type": "text/html",
    });
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
