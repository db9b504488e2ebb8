import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import "./helpers/cloud.ts";
import { getItem } from "../shared/aws/ddb.ts";
import { groupCreate, groupPut } from "../shared/aws/group-write.ts";

// The group commit against DynamoDB Local, which enforces DynamoDB's limits: calls are cut by bytes, and an
// item too big for DynamoDB fails only its own caller.
const pk = `GROUPWRITE#${randomUUID()}`;
const item = (sk: string, bytes: number) => ({ PK: pk, SK: sk, v: "x".repeat(bytes) });
const stored = async (sk: string) => (await getItem("checkpoints", { PK: pk, SK: sk }, true)) !== undefined;

describe("group commit within DynamoDB's limits", () => {
  it("15 creates of ~280 KB from concurrent callers (4.2 MB, over one transaction's 4 MB) are all stored", async () => {
    const created = await Promise.all(
      Array.from({ length: 15 }, (_, i) => groupCreate("checkpoints", [item(`c${i}`, 280_000)])),
    );
    expect(created.flat()).toEqual(new Array(15).fill(true));
    for (let i = 0; i < 15; i++) expect(await stored(`c${i}`)).toBe(true);
  });

  it("an item over 400 KB fails its caller alone: the group's other writes, its caller's too, are stored", async () => {
    const [mine, theirs, create] = await Promise.allSettled([
      groupPut("checkpoints", [item("big", 410_000), item("small", 10)]),
      groupPut("checkpoints", [item("other", 10)]),
      groupCreate("checkpoints", [item("big-create", 410_000)]),
    ]);
    expect(mine).toMatchObject({ status: "rejected", reason: { name: "ItemTooLarge" } });
    expect(create).toMatchObject({ status: "rejected", reason: { name: "ItemTooLarge" } });
    expect(theirs.status).toBe("fulfilled");
    expect(await stored("small")).toBe(true);
    expect(await stored("other")).toBe(true);
    expect(await stored("big")).toBe(false);
  });
});
