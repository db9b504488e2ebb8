import { describe, expect, it } from "vitest";
import type { HttpEvent } from "../../shared/http/event.ts";
import { toRestEvent } from "./rest-event.ts";

const v2 = {
  rawPath: "/agents/x/runs/crons/count",
  headers: {},
  requestContext: { accountId: "0", apiId: "local", http: { method: "GET", sourceIp: "127.0.0.1" } },
} as unknown as HttpEvent;

describe("REST (v1) events made by the local gateway", () => {
  it("keep a query name that is an Object.prototype member as an ordinary name (a fuzz run found a 500)", () => {
    const e = toRestEvent(
      v2,
      "/{proxy+}",
      undefined,
      new URLSearchParams("toString=&toString=b&__proto__=p"),
    );
    expect(e.multiValueQueryStringParameters?.toString).toEqual(["", "b"]);
    expect(e.queryStringParameters?.toString).toBe("b");
    expect(Object.hasOwn(e.multiValueQueryStringParameters ?? {}, "__proto__")).toBe(true);
  });
});
