import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { KMSClient, ListKeysCommand } from "@aws-sdk/client-kms";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimePolicy } from "../../../shared/containment/runtime-policy.ts";
import { localRuntimeScope, mintRuntimeCredentials } from "./credentials.ts";
import { createPolicyProxy, type ProxyPrincipal } from "./handler.ts";

// Refusals that happen before anything is forwarded (the upstreams here accept no connection): the SDK sees
// them as the named errors AWS gives, and no request whatever makes the proxy answer 5xx.
const creds = mintRuntimeCredentials();
const who: ProxyPrincipal = {
  ...creds,
  arn: "arn:aws:sts::000000000000:assumed-role/r/s",
  policy: runtimePolicy(localRuntimeScope("t", "d")),
};
let server: Server;
let endpoint: string;
beforeAll(async () => {
  server = createServer(
    createPolicyProxy({
      principal: (id) => (id === who.accessKeyId ? who : undefined),
      upstream: {
        dynamodb: { endpoint: "http://127.0.0.1:9", token: "t" },
        s3: { endpoint: "http://127.0.0.1:9", token: "t" },
      },
      region: "us-east-1",
    }),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { name: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: e.name,
      status: e.$metadata?.httpStatusCode,
    }),
  );

describe("the policy proxy's refusals", () => {
  it("a request time more than 5 minutes off is refused", async () => {
    const skewed = new DynamoDBClient({
      endpoint,
      region: "us-east-1",
      credentials: creds,
      maxAttempts: 1,
      systemClockOffset: 6 * 60 * 1000,
    });
    expect(
      await failure(skewed.send(new GetItemCommand({ TableName: "platform-main", Key: { PK: { S: "x" } } }))),
    ).toEqual({
      name: "InvalidSignatureException",
      status: 400,
    });
    const s3 = new S3Client({
      endpoint,
      region: "us-east-1",
      credentials: creds,
      forcePathStyle: true,
      maxAttempts: 1,
      systemClockOffset: -6 * 60 * 1000,
    });
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: "b", Key: "k" })))).toEqual({
      name: "RequestTimeTooSkewed",
      status: 403,
    });
  });

  it("a service the proxy was not given an upstream for is refused, as is another region", async () => {
    const kms = new KMSClient({ endpoint, region: "us-east-1", credentials: creds, maxAttempts: 1 });
    expect(await failure(kms.send(new ListKeysCommand({})))).toEqual({
      name: "AccessDeniedException",
      status: 400,
    });
    const elsewhere = new DynamoDBClient({
      endpoint,
      region: "eu-west-1",
      credentials: creds,
      maxAttempts: 1,
    });
    expect(
      (
        await failure(
          elsewhere.send(new GetItemCommand({ TableName: "platform-main", Key: { PK: { S: "x" } } })),
        )
      )?.status,
    ).toBe(400);
  });

  it("any request line, headers and body: a 4xx, never a 5xx", async () => {
    const token = fc.stringMatching(/^[!-~]{0,40}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "PUT", "POST", "DELETE", "HEAD"),
        fc.oneof(
          token.map((t) => `/${t.replace(/[#\s]/g, "")}`),
          fc.constant("/"),
        ),
        fc.record(
          {
            authorization: fc.oneof(
              token,
              fc.constant(
                `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`,
              ),
              fc.constant(
                `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`,
              ),
              fc.constant(
                `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/20260101/us-east-1/kms/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`,
              ),
            ),
            "x-amz-date": fc.oneof(token, fc.constant(new Date().toISOString().replace(/[-:]|\.\d{3}/g, ""))),
            "x-amz-target": fc.oneof(token, fc.constant("DynamoDB_20120810.PutItem")),
            "x-amz-content-sha256": fc.oneof(token, fc.constant("UNSIGNED-PAYLOAD")),
          },
          { requiredKeys: [] },
        ),
        fc.string(),
        async (method, path, headers, body) => {
          const status = await new Promise<number>((resolve, reject) => {
            const req = request(`${endpoint}${path}`, { method, headers }, (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on("error", reject);
            req.end(method === "GET" || method === "HEAD" ? undefined : body);
          });
          expect(status).toBeGreaterThanOrEqual(400);
          expect(status).toBeLessThan(500);
        },
      ),
      { numRuns: 200 },
    );
  });
});
