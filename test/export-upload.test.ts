import { GetObjectCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { newBucket, s3For, s3Proxy } from "../harness/export.ts";
import { StreamedFile } from "../shared/export/upload.ts";
import { facts } from "./helpers/cloud.ts";

// Export files stream to S3 as multipart uploads: memory holds one part, and completing is the commit.
const bytes = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));

describe("StreamedFile (multipart export upload)", () => {
  it("sends parts as they fill, and the object appears only when completed, byte for byte", async () => {
    const s3 = s3For(facts);
    const bucket = await newBucket(facts, "upl");
    const sent: string[] = [];
    const send = s3.send.bind(s3);
    s3.send = ((cmd: any, ...rest: any[]) => {
      sent.push(cmd.constructor.name);
      return (send as any)(cmd, ...rest);
    }) as typeof s3.send;
    const file = new StreamedFile(s3, bucket, "x/part-00000.parquet", 16 * 1024);
    const chunks = [bytes(10_000, 1), bytes(10_000, 2), bytes(20_000, 3), bytes(5_000, 4)];
    for (const c of chunks.slice(0, 3)) await file.add([c]);
    await expect(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: file.key }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
    await file.complete([chunks[3]!]);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: file.key }));
    expect(Buffer.from(await got.Body!.transformToByteArray())).toEqual(Buffer.concat(chunks));
    expect(sent).toEqual([
      "CreateMultipartUploadCommand",
      "UploadPartCommand", // 20,000 bytes ≥ 16 KiB
      "UploadPartCommand", // 20,000 more
      "HeadObjectCommand", // nothing under the key yet
      "UploadPartCommand", // the last 5,000
      "CompleteMultipartUploadCommand",
      "HeadObjectCommand", // the object's size checked
      "GetObjectCommand",
    ]);
  });

  it("a file smaller than one part is a single PutObject", async () => {
    const s3 = s3For(facts);
    const bucket = await newBucket(facts, "upl");
    const file = new StreamedFile(s3, bucket, "small.parquet", 16 * 1024);
    await file.add([bytes(100, 5)]);
    await file.complete([bytes(50, 6)]);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "small.parquet" }));
    expect(Buffer.from(await got.Body!.transformToByteArray())).toEqual(
      Buffer.concat([bytes(100, 5), bytes(50, 6)]),
    );
  });

  it("a completed object whose size is not what was written is an error (checked with a HEAD)", async () => {
    const s3 = s3For(facts);
    const bucket = await newBucket(facts, "upl");
    // The one fault s3rver cannot produce: an object of another size. The HEAD's answer is altered.
    const send = s3.send.bind(s3);
    s3.send = (async (cmd: any, ...rest: any[]) => {
      const out = await (send as any)(cmd, ...rest);
      return cmd instanceof HeadObjectCommand ? { ...out, ContentLength: out.ContentLength - 1 } : out;
    }) as typeof s3.send;
    const file = new StreamedFile(s3, bucket, "short.parquet", 16 * 1024);
    await expect(file.complete([bytes(1000, 9)])).rejects.toThrow(/holds 999 bytes, not the 1000 written/);
  });

  it("an aborted upload leaves no object", async () => {
    const s3 = s3For(facts);
    const bucket = await newBucket(facts, "upl");
    const file = new StreamedFile(s3, bucket, "gone.parquet", 16 * 1024);
    await file.add([bytes(40_000, 7)]);
    await file.abort();
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "gone.parquet" })),
    ).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
  });

  it("a part that fails aborts the multipart upload; the store lacking AbortMultipartUpload does not hide the failure", async () => {
    const bucket = await newBucket(facts, "upl");
    const proxy = await s3Proxy(facts.s3.endpoint);
    try {
      const s3 = s3For(facts, proxy.endpoint);
      const file = new StreamedFile(s3, bucket, "fails.parquet", 16 * 1024);
      proxy.failNext(10); // every attempt of the SDK's retries
      await expect(file.add([bytes(40_000, 8)])).rejects.toMatchObject({ name: "InternalError" });
      const aborts = proxy.requests.filter((r) => r.startsWith("DELETE ") && r.includes("uploadId="));
      expect(aborts).toHaveLength(1);
      expect(aborts[0]).toContain(`/${bucket}/fails.parquet?`);
      await file.abort(); // once is enough
      expect(proxy.requests.filter((r) => r.startsWith("DELETE "))).toHaveLength(1);
      s3.destroy();
    } finally {
      await proxy.close();
    }
  });

  it("a completed upload is not aborted afterwards", async () => {
    const bucket = await newBucket(facts, "upl");
    const proxy = await s3Proxy(facts.s3.endpoint);
    try {
      const s3 = s3For(facts, proxy.endpoint);
      const file = new StreamedFile(s3, bucket, "kept.parquet", 16 * 1024);
      await file.add([bytes(40_000, 9)]);
      await file.complete([bytes(10, 9)]);
      await file.abort();
      expect(proxy.requests.filter((r) => r.startsWith("DELETE "))).toEqual([]);
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "kept.parquet" }));
      expect(head.ContentLength).toBe(40_010);
      s3.destroy();
    } finally {
      await proxy.close();
    }
  });
});
