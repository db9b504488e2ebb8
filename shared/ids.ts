import { createHash } from "node:crypto";

// Name-based UUIDs (RFC 9562 version 5, SHA-1): the same namespace and name always give the same id, which
// makes records derived from other records (export runs, spawned exports) idempotent on retry.
export function uuidv5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  if (ns.length !== 16) throw new Error(`namespace ${namespace} is not a UUID`);
  const hash = createHash("sha1").update(ns).update(name, "utf8").digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Time-ordered UUIDs (RFC 9562 version 7): ids that sort by creation time, so a DynamoDB sort key of ids
// lists newest first without a second attribute. Within one millisecond a counter keeps the order.
let lastMs = 0;
let seq = 0;
export function uuidv7(now = Date.now()): string {
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs++;
    now = lastMs;
  } else {
    lastMs = now;
    seq = crypto.getRandomValues(new Uint16Array(1))[0] & 0x7ff;
  }
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[0] = now / 2 ** 40;
  b[1] = now / 2 ** 32;
  b[2] = now / 2 ** 24;
  b[3] = now / 2 ** 16;
  b[4] = now / 2 ** 8;
  b[5] = now;
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Buffer.from(b).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
