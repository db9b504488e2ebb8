import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { config } from "../config.ts";
import { logger } from "../log.ts";

// One export file on its way to S3: bytes arrive as the writer closes row groups; once a part's worth has
// gathered it goes out as an UploadPart, so memory holds one part whatever the file's size. Completing the
// multipart upload is the commit: until then no object exists under the key. A file smaller than one part
// is a single PutObject. A send that fails drops the unfinished upload (AbortMultipartUpload), so its parts are
// not kept (and billed) by S3; the platform's buckets also expire incomplete uploads (infra/stacks/data-stack.ts).

const CONTENT_TYPE = "application/vnd.apache.parquet";

/**
 * How long one call to a destination may take, whole: `baseMs` plus its body at `bytesPerSecond`. The client's
 * socket timeouts are idle timeouts, so an endpoint that answers a byte every few seconds held a partition for its
 * whole 900 s Lambda timeout and then again on each retry, keeping every other workspace's partitions waiting for
 * the pool (secreview5); past this deadline the call fails and is retried as any failed write is.
 */
export interface CallDeadline {
  baseMs: number;
  bytesPerSecond: number;
}
/** A minute, plus a part of 16 MiB at 256 KiB/s (64 s more): a slow but working link finishes well inside it. */
export const CALL_DEADLINE: CallDeadline = { baseMs: 60_000, bytesPerSecond: 256 * 1024 };

export class StreamedFile {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Every byte given so far: what the object must hold once completed. */
  private totalBytes = 0;
  private uploadId?: string;
  private finished = false;
  private readonly etags: { ETag: string; PartNumber: number }[] = [];

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    readonly key: string,
    private readonly partBytes = config.export.partBytes,
    private readonly deadline: CallDeadline = CALL_DEADLINE,
  ) {}

  /** The options of one call to the destination with a body of `bodyBytes`: aborted past its deadline. */
  private within(bodyBytes = 0): { abortSignal: AbortSignal } {
    const ms = this.deadline.baseMs + Math.ceil((bodyBytes / this.deadline.bytesPerSecond) * 1000);
    return { abortSignal: AbortSignal.timeout(ms) };
  }

  /** Takes the file's next bytes; sends a part when enough have gathered. */
  async add(parts: Buffer[]): Promise<void> {
    for (const p of parts) {
      this.pending.push(p);
      this.pendingBytes += p.length;
      this.totalBytes += p.length;
    }
    if (this.pendingBytes >= this.partBytes) await this.abortingOnFailure(() => this.sendPart());
  }

  /**
   * Sends the last bytes and makes the object appear; then checks its size with a HEAD, as the spec recommends
   * (an object of another size is an error: the file is written again from its cursor). Reading objects is an
   * optional permission of a destination: credentials without it (403) skip the check.
   */
  async complete(last: Buffer[]): Promise<void> {
    await this.abortingOnFailure(() => this.finish(last));
    this.finished = true;
    const head = await this.client
      .send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key }), this.within())
      .catch((err: { $metadata?: { httpStatusCode?: number } }) => {
        if (err?.$metadata?.httpStatusCode === 403) return undefined;
        throw err;
      });
    if (head && head.ContentLength !== this.totalBytes)
      throw new Error(
        `the exported file ${this.key} holds ${head.ContentLength} bytes, not the ${this.totalBytes} written`,
      );
  }

  private async finish(last: Buffer[]): Promise<void> {
    for (const p of last) {
      this.pending.push(p);
      this.pendingBytes += p.length;
      this.totalBytes += p.length;
    }
    if (this.uploadId === undefined) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key,
          Body: Buffer.concat(this.pending, this.pendingBytes),
          ContentType: CONTENT_TYPE,
        }),
        this.within(this.pendingBytes),
      );
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    if (this.pendingBytes > 0) await this.sendPart();
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: this.uploadId,
        MultipartUpload: { Parts: this.etags },
      }),
      this.within(),
    );
  }

  /**
   * Drops an unfinished upload; nothing to do before the first part or after completing, and once is enough.
   * Best effort: a store without AbortMultipartUpload (s3rver, some S3-compatible ones) keeps the parts, which the
   * bucket's lifecycle rule removes; its refusal is logged, never thrown over the failure being handled.
   */
  async abort(): Promise<void> {
    const uploadId = this.uploadId;
    if (uploadId === undefined || this.finished) return;
    this.finished = true;
    await this.client
      .send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: uploadId }),
        this.within(),
      )
      .catch((err) => logger.warn("aborting a multipart upload failed", { key: this.key, error: err }));
  }

  private async abortingOnFailure(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  private async sendPart(): Promise<void> {
    if (this.uploadId === undefined) {
      const out = await this.client.send(
        new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, ContentType: CONTENT_TYPE }),
        this.within(),
      );
      this.uploadId = out.UploadId!;
    }
    const body = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const PartNumber = this.etags.length + 1;
    const out = await this.client.send(
      new UploadPartCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: this.uploadId,
        PartNumber,
        Body: body,
      }),
      this.within(body.length),
    );
    this.etags.push({ ETag: out.ETag!, PartNumber });
  }
}
