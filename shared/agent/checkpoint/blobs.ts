import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { s3 } from "../../aws/clients.ts";
import type { Item } from "../../aws/ddb.ts";
import { config } from "../../config.ts";

// Serialized parts of agent state that would not fit a DynamoDB item (400 KB) live in S3, referenced as `<attr>_ref`.
// Which attributes hold parts is named at run time, so items are handled untyped here (`Item`).

/** A serialized part of an item: stored inline as `attr`, or in S3 at `key` and referenced as `<attr>_ref`. */
export interface Part<A extends string = string> {
  attr: A;
  bytes: Uint8Array;
  key: string;
}

/** The attributes of a record that hold parts `A`: each part inline, or the S3 key of it as `<part>_ref`. */
export type PartSlots<A extends string> = { [P in A]?: Uint8Array } & { [P in A as `${P}_ref`]?: string };

/** Sets the parts on `item`, offloading the largest to S3 until the inline ones total at most `inlineBytes`. */
export async function placeParts<A extends string>(
  record: PartSlots<A>,
  parts: Part<A>[],
  inlineBytes: number,
): Promise<void> {
  const item: Item = record;
  let total = parts.reduce((n, p) => n + p.bytes.byteLength, 0);
  const uploads: Promise<unknown>[] = [];
  for (const part of [...parts].sort((a, b) => b.bytes.byteLength - a.bytes.byteLength)) {
    if (total > inlineBytes) {
      total -= part.bytes.byteLength;
      item[`${part.attr}_ref`] = part.key;
      uploads.push(
        s3().send(new PutObjectCommand({ Bucket: config.checkpointBucket, Key: part.key, Body: part.bytes })),
      );
    } else item[part.attr] = part.bytes;
  }
  await Promise.all(uploads);
}

/** The bytes of a part placed by `placeParts`; undefined when the item has neither. */
export async function readPart<A extends string>(
  record: PartSlots<A>,
  attr: A,
): Promise<Uint8Array | undefined> {
  const item: Item = record;
  if (item[attr] instanceof Uint8Array) return item[attr];
  const key = item[`${attr}_ref`];
  if (typeof key !== "string") return undefined;
  const out = await s3().send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key: key }));
  return out.Body!.transformToByteArray();
}

/** The S3 keys an item references. */
export const refsOf = (item: object): string[] =>
  Object.entries(item).flatMap(([k, v]) => (k.endsWith("_ref") && typeof v === "string" ? [v] : []));

/** Points the item's references of objects under `from` to copies under `to` (copying each object). */
export async function moveRefs(record: object, from: string, to: string): Promise<void> {
  const item: Item = record;
  for (const [attr, ref] of Object.entries(item))
    if (attr.endsWith("_ref") && typeof ref === "string" && ref.startsWith(from)) {
      item[attr] = to + ref.slice(from.length);
      await copyObject(ref, item[attr]);
    }
}

export async function deleteObjects(keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const out = await s3().send(
      new DeleteObjectsCommand({
        Bucket: config.checkpointBucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
    // A key S3 would not delete (AccessDenied, …) fails the call under S3's own code, so callers can tell a denial.
    if (out.Errors?.length)
      throw Object.assign(
        new Error(`S3 DeleteObjects failed for ${out.Errors[0].Key}: ${out.Errors[0].Code}`),
        { name: out.Errors[0].Code ?? "S3DeleteError" },
      );
  }
}

export async function copyObject(from: string, to: string): Promise<void> {
  const source = `${config.checkpointBucket}/${from.split("/").map(encodeURIComponent).join("/")}`;
  await s3().send(new CopyObjectCommand({ Bucket: config.checkpointBucket, Key: to, CopySource: source }));
}
