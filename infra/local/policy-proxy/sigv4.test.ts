import { createHash, createHmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import {
  MAX_SKEW_MS,
  parseAuthorization,
  queryOf,
  requestTime,
  signatureMatches,
  signingKeyDerivations,
} from "./sigv4.ts";

// A request signed as the SDK signs it (its own SignatureV4 with its defaults) is accepted only with the secret
// that signed it, and only as it was signed.
const secret = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t";
class NodeSha256 {
  private h;
  constructor(key?: unknown) {
    this.h = key === undefined ? createHash("sha256") : createHmac("sha256", key as Uint8Array);
  }
  update(d: string | Uint8Array) {
    this.h.update(d);
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
  reset() {}
}

async function signed(opts: {
  service: string;
  path: string;
  query?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
  applyChecksum?: boolean;
}) {
  const at = new Date();
  const s = new SignatureV4({
    service: opts.service,
    region: "us-east-1",
    credentials: { accessKeyId: "AKIATEST", secretAccessKey: secret },
    sha256: NodeSha256 as never,
    uriEscapePath: opts.service !== "s3",
    applyChecksum: opts.applyChecksum,
  });
  const req = await s.sign(
    {
      method: "POST",
      protocol: "http:",
      hostname: "127.0.0.1",
      port: 4566,
      path: opts.path,
      query: opts.query ?? {},
      headers: { host: "127.0.0.1:4566", "content-type": "application/x-amz-json-1.0", ...opts.headers },
      body: opts.body,
    },
    { signingDate: at },
  );
  const qs = new URLSearchParams(opts.query ?? {}).toString().replace(/\+/g, "%20");
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { url: `${opts.path}${qs ? `?${qs}` : ""}`, headers, at, body: opts.body ?? "" };
}
const hash = (b: string) => createHash("sha256").update(b).digest("hex");

async function verify(r: Awaited<ReturnType<typeof signed>>, key = secret, body = r.body, holdBody = true) {
  const cred = parseAuthorization(r.headers.authorization);
  return signatureMatches(
    { method: "POST", url: r.url, headers: r.headers },
    cred,
    key,
    r.at,
    holdBody ? hash(body) : undefined,
  );
}

describe("SigV4 verification", () => {
  it("derives a credential's signing key once a day: its next requests reuse it, another secret derives its own", async () => {
    const sign = () =>
      signed({
        service: "dynamodb",
        path: "/",
        body: '{"TableName":"t"}',
        headers: { "x-amz-target": "DynamoDB_20120810.GetItem" },
      });
    const first = await sign();
    const before = signingKeyDerivations();
    expect(await verify(first)).toBe(true);
    expect(signingKeyDerivations()).toBe(before + 1);
    for (let i = 0; i < 3; i++) expect(await verify(await sign())).toBe(true);
    expect(signingKeyDerivations()).toBe(before + 1);
    // The same key id with another secret is another credential: refused, with a key of its own.
    expect(await verify(first, `${secret}-other`)).toBe(false);
    expect(signingKeyDerivations()).toBe(before + 2);
  });

  it("accepts a DynamoDB request as the SDK signs it, and only with its secret", async () => {
    const r = await signed({
      service: "dynamodb",
      path: "/",
      body: '{"TableName":"t"}',
      headers: { "x-amz-target": "DynamoDB_20120810.GetItem" },
    });
    expect(await verify(r)).toBe(true);
    expect(await verify(r, `${secret}x`)).toBe(false);
  });

  it("refuses a request whose body, signed header, path or query changed after signing", async () => {
    const r = await signed({
      service: "dynamodb",
      path: "/",
      body: '{"TableName":"t"}',
      headers: { "x-amz-target": "DynamoDB_20120810.GetItem" },
    });
    expect(await verify(r, secret, '{"TableName":"u"}')).toBe(false);
    expect(
      await verify({ ...r, headers: { ...r.headers, "x-amz-target": "DynamoDB_20120810.PutItem" } }),
    ).toBe(false);
    const s = await signed({
      service: "s3",
      path: "/b/k%20x",
      query: { uploads: "" },
      headers: { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
    });
    expect(await verify(s, secret, "", false)).toBe(true);
    expect(await verify({ ...s, url: "/b/other" }, secret, "", false)).toBe(false);
    expect(await verify({ ...s, url: "/b/k%20x?delete=" }, secret, "", false)).toBe(false);
  });

  it("refuses a declared payload hash that is not the body's", async () => {
    const r = await signed({
      service: "s3",
      path: "/b",
      query: { delete: "" },
      body: "<Delete/>",
      headers: { "x-amz-content-sha256": hash("<Delete/>") },
    });
    expect(await verify(r, secret, "<Delete/>")).toBe(true);
    expect(await verify(r, secret, "<Delete>other</Delete>")).toBe(false);
  });

  it("refuses a request the proxy cannot hash and that declares no payload hash", async () => {
    const r = await signed({ service: "dynamodb", path: "/", body: "{}", applyChecksum: false });
    expect(await verify(r, secret, "{}", false)).toBe(false);
  });

  it("reads the Authorization header's parts, and refuses a missing or malformed one", () => {
    const c = parseAuthorization(
      `AWS4-HMAC-SHA256 Credential=AKIAX/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"a".repeat(64)}`,
    );
    expect(c).toMatchObject({
      accessKeyId: "AKIAX",
      date: "20260101",
      region: "us-east-1",
      service: "dynamodb",
      signedHeaders: ["host", "x-amz-date"],
    });
    expect(() => parseAuthorization(undefined)).toThrow(Refused);
    expect(() => parseAuthorization("AWS4-HMAC-SHA256 Credential=x")).toThrow(Refused);
    expect(() => parseAuthorization(["a", "b"])).toThrow(Refused);
  });

  it("refuses a request time more than 5 minutes from now", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(requestTime("20260101T120400Z", now).getTime()).toBe(now + 4 * 60 * 1000);
    expect(() => requestTime("20260101T120600Z", now)).toThrow(
      expect.objectContaining({ code: "RequestTimeTooSkewed" }),
    );
    expect(() => requestTime("20260101T115400Z", now)).toThrow(
      expect.objectContaining({ code: "RequestTimeTooSkewed" }),
    );
    expect(MAX_SKEW_MS).toBe(300_000);
    expect(() => requestTime("2026-01-01", now)).toThrow(Refused);
  });
});

describe("query parameters as the signer takes them", () => {
  it("a name like an Object.prototype member is an ordinary name", () => {
    const q = queryOf("/b/k?toString=a&toString=b&constructor=c&__proto__=p");
    expect(q.toString).toEqual(["a", "b"]);
    expect(q.constructor).toBe("c");
    expect(Object.hasOwn(q, "__proto__")).toBe(true);
  });
});
