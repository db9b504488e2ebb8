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
    const put = await presigned(new PutObjectCommand({ Bucket: "bkt", Key: "builds/t/d/r/a b/result.json" }));
    expect(await presignedMatches(put("PUT"), "S3RVER")).toBe(true);
    const get = await presigned(new GetObjectCommand({ Bucket: "bkt", Key: "builds/t/d/r/job.json" }));
    expect(await presignedMatches(get("GET"), "S3RVER")).toBe(true);
  });

  it("do not match another key, method, host, query or secret", async () => {
    const put = await presigned(
      new PutObjectCommand({ Bucket: "bkt", Key: "builds/t/d/r/artifact.json.gz" }),
    );
    const ok = put("PUT");
    expect(await presignedMatches(put("PUT", "/bkt/builds/t/d/other/artifact.json.gz"), "S3RVER")).toBe(
      false,
    );
    expect(await presignedMatches(put("GET"), "S3RVER")).toBe(false);
    expect(await presignedMatches(put("DELETE"), "S3RVER")).toBe(false);
    expect(await presignedMatches(put("PUT", undefined, undefined, "127.0.0.1:1"), "S3RVER")).toBe(false);
    expect(await presignedMatches({ ...ok, url: `${ok.url}&uploads=` }, "S3RVER")).toBe(false);
    expect(await presignedMatches(ok, "another-secret")).toBe(false);
  });

  it("hold for no name s3rver would read as another, even when signed for it", async () => {
    for (const Key of ["builds/t/d/../../../other/job.json", "builds//job.json", "builds/./job.json"]) {
      // The URL as signed, not normalized by WHATWG URL (which would resolve the dot segments itself).
      const raw = await getSignedUrl(client, new GetObjectCommand({ Bucket: "bkt", Key }), {
        expiresIn: 3600,
      });
      const url = raw.slice(raw.indexOf("/", "http://".length));
      expect(url, Key).toContain(Key);
      expect(
        await presignedMatches({ method: "GET", url, headers: { host: "127.0.0.1:4569" } }, "S3RVER"),
        Key,
      ).toBe(false);
    }
  });
});
