import { GetObjectCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { StreamedFile } from "../shared/export/upload.ts";
import { facts } from "./helpers/cloud.ts";
import { newBucket, s3For } from "./helpers/export.ts";

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
});
