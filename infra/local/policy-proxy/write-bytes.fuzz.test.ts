import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import { dynamoWriteBytes, MAX_ITEM_BYTES } from "./write-bytes.ts";

// A write's body is untrusted input: whatever it holds, its charge is a whole number of bytes, or a 4xx refusal
// for an expression the proxy cannot read; an update is never charged more than an item holds.
const av = fc.oneof(
  fc.record({ S: fc.string() }),
  fc.record({ N: fc.string() }),
  fc.record({ B: fc.oneof(fc.base64String(), fc.anything()) }),
  fc.record({ L: fc.array(fc.anything()) }),
  fc.record({ M: fc.dictionary(fc.string(), fc.anything()) }),
  fc.anything(),
);
const item = fc.dictionary(fc.oneof(fc.constantFrom("PK", "__proto__", "constructor"), fc.string()), av);
const expr = fc.oneof(
  fc.string(),
  fc
    .array(
      fc.constantFrom(
        "SET",
        "REMOVE",
        "ADD",
        "#a",
        "#b",
        ":v",
        "=",
        "+",
        ",",
        "(",
        ")",
        ".",
        "[",
        "1",
        "]",
        "list_append",
        "if_not_exists",
        "x",
      ),
      {
        maxLength: 14,
      },
    )
    .map((xs) => xs.join(" ")),
);
const body = fc.record(
  {
    Item: fc.oneof(item, fc.anything()),
    Key: fc.oneof(item, fc.anything()),
    UpdateExpression: fc.oneof(expr, fc.anything()),
    ExpressionAttributeNames: fc.oneof(fc.constant({ "#a": "a", "#b": "b" }), fc.anything()),
    ExpressionAttributeValues: fc.oneof(fc.dictionary(fc.constantFrom(":v", "toString"), av), fc.anything()),
    AttributeUpdates: fc.anything(),
    RequestItems: fc.oneof(
      fc.dictionary(fc.string(), fc.array(fc.record({ PutRequest: fc.record({ Item: item }) }))),
      fc.anything(),
    ),
    TransactItems: fc.oneof(
      fc.array(fc.record({ Put: fc.record({ Item: item }), Update: fc.anything() }, { requiredKeys: [] })),
      fc.anything(),
    ),
  },
  { requiredKeys: [] },
);

describe("what a DynamoDB write can add (fuzz)", () => {
  it("is a whole number of bytes or a 4xx refusal; an update at most an item", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("PutItem", "UpdateItem", "BatchWriteItem", "TransactWriteItems", "DeleteItem"),
        fc.oneof(body, fc.anything()),
        (op, b) => {
          try {
            const n = dynamoWriteBytes(op, b);
            expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
            if (op === "UpdateItem") expect(n).toBeLessThanOrEqual(MAX_ITEM_BYTES);
          } catch (err) {
            expect(err).toBeInstanceOf(Refused);
            expect((err as Refused).status).toBeLessThan(500);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
