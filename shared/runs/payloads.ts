import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { s3 } from "../aws/clients.ts";
import { config } from "../config.ts";
import { logger } from "../log.ts";
import { JSON_FIELDS, type JsonField, type RunJsonAttributes } from "../records/runs.ts";
import { runPayloadPrefix } from "../retention/run-payloads.ts";

// Big JSON fields of a run live in S3, referenced from the item (DynamoDB items stop at 400 KB).

const keyOf = (tenant: string, runId: string, field: JsonField, version: string) =>
  `${runPayloadPrefix(tenant, runId)}${field}-${version}.json`;

/** Sets `<field>_json` inline, or uploads it and sets `<field>_ref`. */
export async function storeField(
  item: RunJsonAttributes & { tenant_id: string; id: string },
  field: JsonField,
  value: unknown,
  version: string,
) {
  if (value === undefined) return;
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) <= config.runs.fieldInlineBytes) {
    item[`${field}_json` as const] = text;
    item[`${field}_ref` as const] = null;
    return;
  }
  const key = keyOf(String(item.tenant_id), String(item.id), field, version);
  await s3().send(
    new PutObjectCommand({
      Bucket: config.defaultBucket,
      Key: key,
      Body: text,
      ContentType: "application/json",
    }),
  );
  item[`${field}_json` as const] = null;
  item[`${field}_ref` as const] = key;
}

/** The value of a JSON field, fetched from S3 when it was offloaded. */
export async function loadField(item: RunJsonAttributes, field: JsonField): Promise<unknown> {
  const inline = item[`${field}_json` as const];
  if (typeof inline === "string") return JSON.parse(inline);
  const ref = item[`${field}_ref` as const];
  if (typeof ref !== "string") return undefined;
  try {
    const out = await s3().send(new GetObjectCommand({ Bucket: config.defaultBucket, Key: ref }));
    return JSON.parse(await out.Body!.transformToString("utf8"));
  } catch (err) {
    // The object a read item names can be gone a moment later: a newer version of the field replaced it, or the
    // run's project is being purged. The reader gets the field as absent, not a 500.
    if ((err as { name?: string }).name !== "NoSuchKey") throw err;
    logger.warn("run payload object missing", { key: ref, field });
    return undefined;
  }
}

export async function loadFields(item: RunJsonAttributes): Promise<Record<JsonField, unknown>> {
  const values = await Promise.all(JSON_FIELDS.map((f) => loadField(item, f)));
  return Object.fromEntries(JSON_FIELDS.map((f, i) => [f, values[i]])) as Record<JsonField, unknown>;
}
