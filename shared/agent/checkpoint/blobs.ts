import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { s3 } from "../../aws/clients.ts";
import type { Item } from "../../aws/ddb.ts";
import { config } from "../../config.ts";
import { logger } from "../../log.ts";
import { checkpointPkParts } from "../../records/agent.ts";
import { s3ThreadPrefix } from "../../records/checkpoint-keys.ts";

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
  if (typeof item[`${attr}_ref`] !== "string") return undefined;
  const key = ownRef(record, attr);
  if (key === undefined)
    throw new Error(`checkpoint item ${String(item.SK)} names an S3 object outside its thread (${attr}_ref)`);
  const out = await s3().send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key: key }));
  return out.Body!.transformToByteArray();
}

/**
 * The S3 key an item's `<attr>_ref` names, when it lies under the item's own thread prefix — the one its primary
 * key (PK) builds, as `placeParts` was given it — else undefined. Items are written by deployments' runtimes (their
 * role may write any attribute of their own items), and the platform deletes what they reference with a role that
 * reaches every workspace's objects (the thread-TTL sweep, a deployment's purge, a rollback by the run sweeper): a
 * reference is trusted only by the item's key, never by what the item says.
 */
export function ownRef(record: object, attr: string): string | undefined {
  const item: Item = record;
  const ref = item[`${attr}_ref`];
  const parts = typeof item.PK === "string" ? checkpointPkParts(item.PK) : undefined;
  if (typeof ref !== "string" || !parts) return undefined;
  return within(s3ThreadPrefix(parts.scope, parts.thread), ref) ? ref : undefined;
}

/**
 * A key under `prefix`, with no `.` or `..` segment anywhere (which a backend resolving paths would read as another
 * key). Anywhere, not only after the prefix: a runtime may write items of a thread named `..` (and a thread index
 * entry naming it, which a purge reads), whose prefix `checkpoints/<scope>/../` then leads out of its own scope
 * (secreview5; the policy proxy refuses such keys locally and S3 reads them literally, so this is the first fence).
 */
const within = (prefix: string, ref: string) =>
  ref.startsWith(prefix) && !ref.split("/").some((seg) => seg === "." || seg === "..");

/** The S3 keys an item references within its own thread; any other it names is logged and left alone. */
export function refsOf(record: object): string[] {
  const item: Item = record;
  return Object.entries(item).flatMap(([k, v]) => {
    if (!k.endsWith("_ref") || typeof v !== "string") return [];
    const own = ownRef(item, k.slice(0, -"_ref".length));
    if (own === undefined)
      logger.warn("checkpoint item names an S3 object outside its thread: not deleted", {
        pk: item.PK,
        sk: item.SK,
        attr: k,
      });
    return own === undefined ? [] : [own];
  });
}

/**
 * Points the item's references of objects under `from` (the thread prefix the item was read from) to copies under
 * `to` (copying each object). A reference outside `from` is dropped from the copy, never copied.
 */
export async function moveRefs(record: object, from: string, to: string): Promise<void> {
  const item: Item = record;
  for (const [attr, ref] of Object.entries(item))
    if (attr.endsWith("_ref") && typeof ref === "string") {
      if (!within(from, ref)) {
        logger.warn("checkpoint item names an S3 object outside its thread: not copied", {
          sk: item.SK,
          attr,
        });
        delete item[attr];
        continue;
      }
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
