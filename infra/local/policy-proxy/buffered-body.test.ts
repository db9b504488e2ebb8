import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { bufferedBodyBytes } from "./handler.ts";

// What the proxy holds of a request's body, read before the body: the platform socket's budget counts it.
const auth = (service: string) =>
  `AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261128/us-east-1/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`;
const req = (method: string, url: string, headers: Record<string, string> = {}) =>
  ({ method, url, headers }) as unknown as IncomingMessage;

describe("bufferedBodyBytes", () => {
  it("a DynamoDB-signed call counts DynamoDB's 16 MiB, with or without X-Amz-Target", () => {
    expect(bufferedBodyBytes(req("POST", "/", { authorization: auth("dynamodb") }))).toBe(16 * 1024 * 1024);
    expect(
      bufferedBodyBytes(
        req("POST", "/", { authorization: auth("dynamodb"), "x-amz-target": "DynamoDB_20120810.GetItem" }),
      ),
    ).toBe(16 * 1024 * 1024);
  });

  it("an emulated service's call (Lambda, KMS, Step Functions, Scheduler) counts 6 MB, whatever its target", () => {
    for (const s of ["lambda", "kms", "states", "scheduler"])
      expect(
        bufferedBodyBytes(req("POST", "/2015-03-31/functions/f/invocations", { authorization: auth(s) })),
      ).toBe(6 * 1024 * 1024);
  });

  it("a DeleteObjects body counts 2 MiB; other S3 bodies stream (0)", () => {
    expect(bufferedBodyBytes(req("POST", "/bucket?delete", { authorization: auth("s3") }))).toBe(
      2 * 1024 * 1024,
    );
    expect(bufferedBodyBytes(req("PUT", "/bucket/key", { authorization: auth("s3") }))).toBe(0);
    expect(bufferedBodyBytes(req("GET", "/bucket/a/../b", { authorization: auth("s3") }))).toBe(0);
  });

  it("what the proxy refuses unread counts nothing: an unparsed Authorization, another service", () => {
    expect(bufferedBodyBytes(req("POST", "/", { authorization: "AWS4-HMAC-SHA256 nonsense" }))).toBe(0);
    expect(bufferedBodyBytes(req("POST", "/", { authorization: auth("sqs") }))).toBe(0);
  });

  it("a presigned URL whose parameters are malformed counts nothing (refused unread), rather than throwing", () => {
    expect(
      bufferedBodyBytes(req("PUT", "/bucket/key?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=0")),
    ).toBe(0);
  });
});
