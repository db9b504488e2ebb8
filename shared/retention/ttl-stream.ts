import { ATTACHMENT_SK_PREFIX } from "../records/runs.ts";

// DynamoDB Streams records of items DynamoDB TTL deleted: which ones a consumer acts on. In AWS they come from a
// table's stream (the event source mapping filters them the same way); locally from the TTL emulation
// (infra/local/ttl.ts), which delivers records of the same shape.

/** What DynamoDB TTL writes as a REMOVE record's userIdentity (a user's DeleteItem carries none). */
export const TTL_IDENTITY = { type: "Service", principalId: "dynamodb.amazonaws.com" } as const;

/** The members of a DynamoDB Streams record read here (the rest of the record is ignored). */
export interface StreamRecord {
  eventName?: string;
  userIdentity?: { type?: string; principalId?: string };
  dynamodb?: { Keys?: Record<string, { S?: string }>; SequenceNumber?: string };
}

/** The items a TTL consumer acts on: TTL deletes of items whose sort key SK is `sortKey` or begins with a prefix. */
export interface TtlDeleteFilter {
  sortKey: string;
  sortKeyPrefixes?: readonly string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The keys of a TTL delete of an item the filter names, else undefined (other events, garbage). */
export function ttlDeletedItem(
  record: unknown,
  filter: TtlDeleteFilter,
): { PK: string; SK: string } | undefined {
  if (!isObject(record) || record.eventName !== "REMOVE") return undefined;
  const who = record.userIdentity;
  if (!isObject(who) || who.type !== TTL_IDENTITY.type || who.principalId !== TTL_IDENTITY.principalId)
    return undefined;
  const keys = isObject(record.dynamodb) ? record.dynamodb.Keys : undefined;
  const sk = isObject(keys) && isObject(keys.SK) ? keys.SK.S : undefined;
  if (typeof sk !== "string") return undefined;
  if (sk !== filter.sortKey && !filter.sortKeyPrefixes?.some((p) => sk.startsWith(p))) return undefined;
  const pk = isObject(keys) && isObject(keys.PK) ? keys.PK.S : undefined;
  return typeof pk === "string" ? { PK: pk, SK: sk } : undefined;
}

/** The PK of a TTL delete of an item the filter names, else undefined. */
export function ttlDeletedKey(record: unknown, filter: TtlDeleteFilter): string | undefined {
  return ttlDeletedItem(record, filter)?.PK;
}

/** The sort key of a run's own item (shared/records/runs.ts): the record whose TTL delete ends the run. */
export const RUN_ITEM: TtlDeleteFilter = { sortKey: "run" };

/** What retention's cleanup consumes: TTL deletes of run items and of run attachment records. */
export const RUN_CLEANUP: TtlDeleteFilter = { ...RUN_ITEM, sortKeyPrefixes: [ATTACHMENT_SK_PREFIX] };

/** A run partition's `<tenant>#<run id>` (neither contains `#`), else undefined. */
function runOfPk(pk: string | undefined): { tenant_id: string; run_id: string } | undefined {
  const parts = pk?.split("#");
  if (parts?.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { tenant_id: parts[0], run_id: parts[1] };
}

/** The run whose item TTL deleted, else undefined. */
export function expiredRun(record: unknown): { tenant_id: string; run_id: string } | undefined {
  return runOfPk(ttlDeletedKey(record, RUN_ITEM));
}

/** The attachment whose record TTL deleted (its run's partition, its name), else undefined. */
export function expiredAttachment(
  record: unknown,
): { tenant_id: string; run_id: string; name: string } | undefined {
  const item = ttlDeletedItem(record, RUN_CLEANUP);
  if (!item?.SK.startsWith(ATTACHMENT_SK_PREFIX)) return undefined;
  const run = runOfPk(item.PK);
  const name = item.SK.slice(ATTACHMENT_SK_PREFIX.length);
  return run && name ? { ...run, name } : undefined;
}

/** The records of a stream event (`{Records: [...]}`); anything else has none. */
export function recordsOf(event: unknown): unknown[] {
  return isObject(event) && Array.isArray(event.Records) ? event.Records : [];
}

/** A record's sequence number: what a partial batch failure names to have the rest retried from there. */
export function sequenceNumberOf(record: unknown): string | undefined {
  if (!isObject(record) || !isObject(record.dynamodb)) return undefined;
  const n = record.dynamodb.SequenceNumber;
  return typeof n === "string" ? n : undefined;
}
