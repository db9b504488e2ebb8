import { describe, expect, it } from "vitest";
import { chargeS3Write } from "./budget-charges.ts";
import { Refused } from "./refusal.ts";
import { s3Authorizations } from "./s3-request.ts";
import { StorageBudget } from "./storage-budget.ts";

// What an S3 write of a runtime is charged: its stated length, a copy's source size, each object within the bound.
const scope = { tenant_id: "t", deployment_id: "d" };
const budget = () =>
  new StorageBudget({
    limitBytes: 10_000,
    maxObjectBytes: 1000,
    measure: async () => 0,
    objectSize: async (_b, key) => (key.endsWith("src") ? 700 : undefined),
  });
const write = (method: string, url: string, headers: Record<string, string>, copy?: string) => ({
  method,
  url,
  headers,
  call: s3Authorizations(method, url, copy),
});
const code = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: Refused) => (e instanceof Refused ? e.code : String(e)),
  );

describe("an S3 write's charge", () => {
  it("is a PUT's stated length; past the object bound, EntityTooLarge", async () => {
    const b = budget();
    await chargeS3Write(b, scope, write("PUT", "/bkt/k?x-id=PutObject", { "content-length": "600" }));
    expect(b.used(scope)).toBe(600);
    expect(await code(chargeS3Write(b, scope, write("PUT", "/bkt/k", { "content-length": "1001" })))).toBe(
      "EntityTooLarge",
    );
  });

  it("refuses a body without a stated length (chunked), as S3 refuses a PutObject without Content-Length", async () => {
    const b = budget();
    const chunked = write("PUT", "/bkt/k", { "transfer-encoding": "chunked" });
    expect(await code(chargeS3Write(b, scope, chunked))).toBe("MissingContentLength");
    expect(await code(chargeS3Write(b, scope, write("PUT", "/bkt/k", { "content-length": "1e3" })))).toBe(
      "MissingContentLength",
    );
  });

  it("charges a copy its source's size, and bounds it as an object", async () => {
    const b = budget();
    await chargeS3Write(b, scope, write("PUT", "/bkt/dst", { "content-length": "0" }, "bkt/src"));
    expect(b.used(scope)).toBe(700);
  });

  it("bounds a multipart upload's parts together, until it completes", async () => {
    const b = budget();
    const part = (n: number) =>
      chargeS3Write(b, scope, write("PUT", `/bkt/k?partNumber=${n}&uploadId=u`, { "content-length": "600" }));
    await part(1);
    expect(await code(part(2))).toBe("EntityTooLarge");
    await chargeS3Write(b, scope, write("POST", "/bkt/k?uploadId=u", { "content-length": "100" }));
    await part(1);
    expect(b.used(scope)).toBe(1300);
  });

  it("charges nothing for reads, deletes and a DeleteObjects body", async () => {
    const b = budget();
    await chargeS3Write(b, scope, write("GET", "/bkt/k", {}));
    await chargeS3Write(b, scope, write("DELETE", "/bkt/k", {}));
    await chargeS3Write(b, scope, write("POST", "/bkt?delete", { "content-length": "500" }));
    expect(b.used(scope)).toBe(0);
  });
});
