import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { describe, expect, it } from "vitest";
import { presignedMatches } from "./s3-presigned.ts";

// A presigned URL holds for the method, host, key and query it was made for, with the key that made it.
const client = new S3Client({
  region: "us-east-1",
  endpoint: "http://127.0.0.1:4569",
  forcePathStyle: true,
  credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
});

async function presigned(command: PutObjectCommand | GetObjectCommand) {
  const url = new URL(await getSignedUrl(client, command, { expiresIn: 3600 }));
  return (method: string, path = url.pathname, search = url.search, host = url.host) => ({
    method,
    url: path + search,
    headers: { host },
  });
}

describe("presigned URLs on the local S3", () => {
  it("match for the method and key they were made for", async () => {
    const put = await presigned(new PutObjectCommand({ Bucket: "b", Key: "builds/t/d/r/a b/result.json" }));
    expect(await presignedMatches(put("PUT"), "S3RVER")).toBe(true);
    const get = await presigned(new GetObjectCommand({ Bucket: "b", Key: "builds/t/d/r/job.json" }));
    expect(await presignedMatches(get("GET"), "S3RVER")).toBe(true);
  });

  it("do not match another key, method, host, query or secret", async () => {
    const put = await presigned(new PutObjectCommand({ Bucket: "b", Key: "builds/t/d/r/artifact.json.gz" }));
    const ok = put("PUT");
    expect(await presignedMatches(put("PUT", "/b/builds/t/d/other/artifact.json.gz"), "S3RVER")).toBe(false);
    expect(await presignedMatches(put("GET"), "S3RVER")).toBe(false);
    expect(await presignedMatches(put("DELETE"), "S3RVER")).toBe(false);
    expect(await presignedMatches(put("PUT", undefined, undefined, "127.0.0.1:1"), "S3RVER")).toBe(false);
    expect(await presignedMatches({ ...ok, url: `${ok.url}&uploads=` }, "S3RVER")).toBe(false);
    expect(await presignedMatches(ok, "another-secret")).toBe(false);
  });
});
