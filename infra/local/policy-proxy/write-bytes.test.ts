import { describe, expect, it } from "vitest";
import {
  attributeValueBytes,
  dynamoWriteBytes,
  itemBytes,
  MAX_ITEM_BYTES,
  updateCopies,
} from "./write-bytes.ts";

// What a DynamoDB write can add to what is stored, as the storage budget charges it.
const p = (names: Record<string, string> = {}) => ({ names, values: {} });

describe("an item's size, as DynamoDB counts it", () => {
  it("is its attribute names and values: strings in UTF-8, binaries decoded, numbers by digits", () => {
    expect(itemBytes({ PK: { S: "abc" } })).toBe(2 + 3);
    expect(itemBytes({ é: { S: "é" } })).toBe(2 + 2);
    expect(itemBytes({ b: { B: Buffer.alloc(30).toString("base64") } })).toBe(1 + 30);
    expect(itemBytes({ b: { B: new Uint8Array(30) } })).toBe(1 + 30);
    expect(attributeValueBytes({ N: "1234" })).toBe(3);
    expect(attributeValueBytes({ BOOL: true })).toBe(1);
  });

  it("counts lists and maps with their overhead and nested names", () => {
    expect(attributeValueBytes({ L: [{ S: "ab" }, { S: "c" }] })).toBe(3 + (1 + 2) + (1 + 1));
    expect(attributeValueBytes({ M: { k: { S: "ab" } } })).toBe(3 + (1 + 2) + 1);
  });

  it("is 0 for what is not an item", () => {
    expect(itemBytes(undefined)).toBe(0);
    expect(itemBytes([1, 2])).toBe(0);
    expect(attributeValueBytes("x")).toBe(0);
  });
});

describe("what a write can add", () => {
  const item = { PK: { S: "k" }, v: { S: "x".repeat(1000) } };

  it("a put adds its item; a batch and a transaction the sum of theirs; deletes and reads nothing", () => {
    const one = itemBytes(item);
    expect(dynamoWriteBytes("PutItem", { Item: item })).toBe(one);
    expect(
      dynamoWriteBytes("BatchWriteItem", {
        RequestItems: { t: [{ PutRequest: { Item: item } }, { DeleteRequest: { Key: { PK: { S: "k" } } } }] },
      }),
    ).toBe(one);
    expect(
      dynamoWriteBytes("TransactWriteItems", {
        TransactItems: [{ Put: { Item: item } }, { Put: { Item: item } }, { Delete: { Key: item } }],
      }),
    ).toBe(2 * one);
    expect(dynamoWriteBytes("DeleteItem", { Key: item })).toBe(0);
    expect(dynamoWriteBytes("Query", { Item: item })).toBe(0);
  });

  it("an update adds at most its key, names and values", () => {
    const n = dynamoWriteBytes("UpdateItem", {
      Key: { PK: { S: "k" } },
      UpdateExpression: "SET #v = :v, #n = #n + :one",
      ExpressionAttributeNames: { "#v": "v", "#n": "n" },
      ExpressionAttributeValues: { ":v": { S: "x".repeat(500) }, ":one": { N: "1" } },
    });
    expect(n).toBe(3 + 2 + 500 + 2);
  });

  it("an update whose expression copies stored attributes is charged a whole item", () => {
    const copying = [
      "SET #a = list_append(#a, #a)",
      "SET #b = #a",
      "SET #b = if_not_exists(#a, :v)",
      "SET #b = list_append(#a, :v)",
      "SET #a.x = #a",
    ];
    for (const e of copying) {
      expect(updateCopies(e, p({ "#a": "a", "#b": "b" })), e).toBe(true);
      expect(
        dynamoWriteBytes("UpdateItem", {
          Key: { PK: { S: "k" } },
          UpdateExpression: e,
          ExpressionAttributeNames: { "#a": "a", "#b": "b" },
          ExpressionAttributeValues: { ":v": { S: "v" } },
        }),
      ).toBe(MAX_ITEM_BYTES);
    }
  });

  it("appending to, counting in or defaulting an attribute itself copies nothing", () => {
    for (const e of [
      "SET #l = list_append(if_not_exists(#l, :e), :v)",
      "SET #n = #n + :one REMOVE #x",
      "SET #c = if_not_exists(#c, :now), #d = :v ADD #s :v",
      "SET a.b[1] = a.b[1] + :one",
    ])
      expect(
        updateCopies(e, p({ "#l": "l", "#n": "n", "#x": "x", "#c": "c", "#d": "d", "#s": "s" })),
        e,
      ).toBe(false);
  });

  it("an update never counts for more than an item can hold", () => {
    const n = dynamoWriteBytes("UpdateItem", {
      Key: { PK: { S: "k" } },
      UpdateExpression: "SET v = :v",
      ExpressionAttributeValues: { ":v": { S: "x".repeat(MAX_ITEM_BYTES * 2) } },
    });
    expect(n).toBe(MAX_ITEM_BYTES);
  });
});
