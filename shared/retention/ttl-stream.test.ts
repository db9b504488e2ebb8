import { describe, expect, it } from "vitest";
import {
  expiredAttachment,
  expiredRun,
  RUN_CLEANUP,
  RUN_ITEM,
  recordsOf,
  sequenceNumberOf,
  TTL_IDENTITY,
  ttlDeletedKey,
} from "./ttl-stream.ts";

// A DynamoDB Streams record as Lambda delivers it (KEYS_ONLY view).
const record = (over: {
  eventName?: string;
  userIdentity?: unknown;
  PK?: string;
  SK?: string;
  seq?: string;
}): Record<string, unknown> => ({
  eventID: "1",
  eventName: over.eventName ?? "REMOVE",
  eventSource: "aws:dynamodb",
  dynamodb: {
    Keys: { PK: { S: over.PK ?? "t1#r1" }, SK: { S: over.SK ?? "run" } },
    SequenceNumber: over.seq ?? "100",
    StreamViewType: "KEYS_ONLY",
  },
  ...("userIdentity" in over ? { userIdentity: over.userIdentity } : { userIdentity: { ...TTL_IDENTITY } }),
});

describe("TTL stream records", () => {
  it("a TTL REMOVE of a run item names its tenant and run", () => {
    expect(expiredRun(record({ PK: "tenant-a#run-1" }))).toEqual({ tenant_id: "tenant-a", run_id: "run-1" });
  });

  it("a user's delete (no userIdentity, e.g. a project purge) is ignored", () => {
    expect(expiredRun(record({ userIdentity: undefined }))).toBeUndefined();
    expect(
      expiredRun(record({ userIdentity: { type: "Service", principalId: "other.amazonaws.com" } })),
    ).toBe(undefined);
    expect(
      expiredRun(record({ userIdentity: { type: "User", principalId: "dynamodb.amazonaws.com" } })),
    ).toBe(undefined);
  });

  it("inserts and modifications are ignored", () => {
    expect(expiredRun(record({ eventName: "INSERT" }))).toBeUndefined();
    expect(expiredRun(record({ eventName: "MODIFY" }))).toBeUndefined();
  });

  it("the run's other items (patch, feedback, feedback pointers, tier) are ignored", () => {
    for (const SK of ["patch", "feedback#f1", "feedback_stats", "tier", "feedback"])
      expect(expiredRun(record({ SK }))).toBeUndefined();
    expect(expiredRun(record({ PK: "t1#feedback#f1", SK: "feedback" }))).toBeUndefined();
  });

  it("a partition key that is not <tenant>#<run id> is ignored", () => {
    for (const PK of ["t1", "t1#", "#r1", "t1#r1#x", ""]) expect(expiredRun(record({ PK }))).toBeUndefined();
  });

  it("the filter names the sort key acted on", () => {
    expect(ttlDeletedKey(record({ SK: "patch" }), { sortKey: "patch" })).toBe("t1#r1");
    expect(ttlDeletedKey(record({}), RUN_ITEM)).toBe("t1#r1");
  });

  it("a TTL REMOVE of an attachment record names its run and the attachment; retention's filter takes both", () => {
    const a = record({ PK: "t1#r1", SK: "attachment#photo" });
    expect(expiredAttachment(a)).toEqual({ tenant_id: "t1", run_id: "r1", name: "photo" });
    expect(expiredRun(a)).toBeUndefined();
    expect(expiredAttachment(record({}))).toBeUndefined();
    expect(expiredAttachment(record({ SK: "attachment#" }))).toBeUndefined();
    expect(expiredAttachment(record({ SK: "attachment#photo", userIdentity: undefined }))).toBeUndefined();
    expect(expiredAttachment(record({ SK: "attachment#photo", PK: "t1#feedback#f1" }))).toBeUndefined();
    expect(ttlDeletedKey(a, RUN_CLEANUP)).toBe("t1#r1");
    expect(ttlDeletedKey(record({}), RUN_CLEANUP)).toBe("t1#r1");
    expect(ttlDeletedKey(record({ SK: "patch" }), RUN_CLEANUP)).toBeUndefined();
  });

  it("an event's records and their sequence numbers", () => {
    expect(recordsOf({ Records: [1, 2] })).toEqual([1, 2]);
    for (const e of [null, undefined, 1, "x", {}, { Records: "x" }]) expect(recordsOf(e)).toEqual([]);
    expect(sequenceNumberOf(record({ seq: "42" }))).toBe("42");
    expect(sequenceNumberOf({ dynamodb: {} })).toBeUndefined();
    expect(sequenceNumberOf(null)).toBeUndefined();
  });
});
