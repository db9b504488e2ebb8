import { describe, expect, it } from "vitest";
import { tableName } from "../tables.ts";
import { itemBytes, putUnits, writeUnits } from "./write-units.ts";

// DynamoDB's billing rules for writes (on-demand write request units), as benchmarks estimate them.
describe("write units", () => {
  const main = tableName("main");
  const small = { PK: { S: "p" }, SK: { S: "s" }, v: { S: "x".repeat(100) } };
  const big = { PK: { S: "p" }, SK: { S: "s" }, v: { S: "x".repeat(2500) } };

  it("an item's size is its attribute names and values", () => {
    expect(itemBytes(small)).toBe(2 + 1 + 2 + 1 + 1 + 100);
    expect(itemBytes({ m: { M: { a: { S: "xy" } } }, l: { L: [{ BOOL: true }] } })).toBe(
      1 + 3 + 1 + 2 + 1 + 1 + 3 + 2,
    );
  });

  it("one unit per started KB, twice in a transaction, once more per index the item lands in", () => {
    expect(putUnits(main, small)).toBe(1);
    expect(putUnits(main, big)).toBe(3);
    expect(putUnits(main, small, true)).toBe(2);
    expect(putUnits(main, { ...small, GSI1PK: { S: "g" }, GSI1SK: { S: "h" } })).toBe(2);
  });

  it("an index that includes a few attributes costs what it holds of the item, not the whole item", () => {
    const run = {
      ...big,
      status: { S: "running" },
      AGENT1PK: { S: "AGENT#ACTIVE_RUNS#3" },
      AGENT1SK: { S: "k" },
    };
    expect(putUnits(main, run)).toBe(3 + 1);
  });

  it("requests: puts, batches and transactions; plain updates are left to the store's own figure", () => {
    expect(writeUnits("PutItemCommand", { TableName: main, Item: big })).toBe(3);
    expect(
      writeUnits("BatchWriteItemCommand", {
        RequestItems: { [main]: [{ PutRequest: { Item: small } }, { DeleteRequest: { Key: {} } }] },
      }),
    ).toBe(2);
    expect(
      writeUnits("TransactWriteItemsCommand", {
        TransactItems: [
          { Put: { TableName: main, Item: small } },
          { Update: { TableName: main, Key: {}, UpdateExpression: "SET a = :a" } },
          { ConditionCheck: { TableName: main, Key: {}, ConditionExpression: "attribute_exists(PK)" } },
        ],
      }),
    ).toBe(6);
    expect(writeUnits("UpdateItemCommand", {})).toBeUndefined();
  });
});
