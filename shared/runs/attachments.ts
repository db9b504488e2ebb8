import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { s3 } from "../aws/clients.ts";
import { putItem, queryAll } from "../aws/ddb.ts";
import { forEachLimit } from "../concurrency.ts";
import { config } from "../config.ts";
import type { ValidationIssue } from "../errors.ts";
import type { Attachment } from "../ingest/parts.ts";
import { type AttachmentRecord, traceRunKeys } from "../records/runs.ts";
import { attachmentObjectKey } from "../retention/run-payloads.ts";
import { isoNow } from "../time.ts";
import { recordExpiry } from "./tiers.ts";

// Files sent with a run: the `attachment.<run id>.<name>` parts of /runs/multipart (the langsmith SDKs send a
// run's `attachments` this way). The bytes go to S3 under the run's payload prefix, so retention and project
// deletion take them with the run; a record in the run's partition names each one. A run answers them in
// `s3_urls` as `attachment.<name>` → {presigned_url, mime_type}, as the hosted platform does.

/** Names the SDKs accept (no dot: it separates the part name's pieces) and a key can hold. */
const nameOk = (name: string) =>
  name.length >= 1 &&
  name.length <= 200 &&
  ![...name].some((c) => c === "." || c === "/" || c === "\\" || c.charCodeAt(0) < 0x20 || c === "\u007f");
/** `type/subtype`, as RFC 6838 restricts them. */
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/**
 * What an attachment part says about itself: its name checked, its media type without parameters (the SDKs
 * add `; length=N`), lower-cased. A problem is a message for the part's error.
 */
export function readAttachmentPart(
  a: Pick<Attachment, "name" | "contentType">,
): { name: string; mimeType: string } | { problem: string } {
  if (!nameOk(a.name))
    return {
      problem: "attachment names are 1 to 200 characters without '.', '/', '\\' or control characters",
    };
  const mimeType = (a.contentType.split(";")[0] ?? "").trim().toLowerCase() || "application/octet-stream";
  if (!MIME.test(mimeType))
    return { problem: `the part's content type is not a media type: ${a.contentType}` };
  return { name: a.name, mimeType };
}

/**
 * Stores the attachments of one request: each object, then its record (a retry writes both again, the same
 * key and the same record: idempotent). A part whose name or type cannot be used is an error of its own.
 */
export async function storeAttachments(
  tenant: string,
  attachments: readonly Attachment[],
): Promise<{ accepted: string[]; errors: ValidationIssue[] }> {
  const accepted: string[] = [];
  const errors: ValidationIssue[] = [];
  await forEachLimit(attachments, 8, async (a) => {
    const part = `attachment.${a.runId}.${a.name}`;
    const read = readAttachmentPart(a);
    if ("problem" in read) {
      errors.push({ loc: ["body", part], msg: read.problem, type: "value_error" });
      return;
    }
    const key = attachmentObjectKey(tenant, a.runId, read.name);
    await s3().send(
      new PutObjectCommand({
        Bucket: config.defaultBucket,
        Key: key,
        Body: a.data,
        ContentType: read.mimeType,
      }),
    );
    const record: AttachmentRecord = {
      ...traceRunKeys.attachment(tenant, a.runId, read.name),
      tenant_id: tenant,
      run_id: a.runId,
      name: read.name,
      mime_type: read.mimeType,
      size: a.data.byteLength,
      key,
      received_at: isoNow(),
      expires_at: recordExpiry(),
    };
    await putItem("runs", { ...record });
    accepted.push(part);
  });
  return { accepted, errors };
}

// Types a browser shows without running anything or rendering a document on the bucket's origin: raster images,
// audio, video, plain text and JSON. Every other type — text/html, image/svg+xml, XHTML, XML, JavaScript, PDF, and
// anything unknown — is presigned with `Content-Disposition: attachment`, so a browser saves it instead (a
// presigned URL cannot set X-Content-Type-Options, so the disposition is what holds).
const INLINE_TYPES = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "audio/webm",
  "video/mp4",
  "video/ogg",
  "video/webm",
  "text/plain",
  "application/json",
]);

/** Whether an attachment of this media type is served inline (else as a download). */
export const servedInline = (mimeType: string): boolean => INLINE_TYPES.has(mimeType.toLowerCase());

/** `attachment; filename*=…` (RFC 6266/5987): the name survives any characters it holds. */
const downloadDisposition = (name: string) =>
  `attachment; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;

/** A run's attachments as its `s3_urls`: `attachment.<name>` → a presigned GET of the object and its type. */
export async function attachmentUrls(
  tenant: string,
  runId: string,
): Promise<Record<string, { presigned_url: string; mime_type: string }>> {
  const records = await queryAll<AttachmentRecord>("runs", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :a)",
    values: { ":pk": `${tenant}#${runId}`, ":a": "attachment#" },
    ConsistentRead: true,
  });
  const urls: Record<string, { presigned_url: string; mime_type: string }> = {};
  for (const r of records.sort((a, b) => a.name.localeCompare(b.name))) {
    const presigned_url = await getSignedUrl(
      s3(),
      new GetObjectCommand({
        Bucket: config.defaultBucket,
        Key: r.key,
        ResponseContentType: r.mime_type,
        ...(servedInline(r.mime_type) ? {} : { ResponseContentDisposition: downloadDisposition(r.name) }),
      }),
      { expiresIn: config.runs.attachmentUrlSeconds },
    );
    urls[`attachment.${r.name}`] = { presigned_url, mime_type: r.mime_type };
  }
  return urls;
}
