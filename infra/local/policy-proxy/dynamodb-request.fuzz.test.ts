import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dynamoAuthorizations, dynamoOperation } from "./dynamodb-request.ts";
import { localTables } from "./local-tables.ts";
import { Refused } from "./refusal.ts";

// A DynamoDB request body is untrusted input: any body gives authorization requests or a refusal (4xx), never
// another error; and whatever it reads, an item call always names its partition key values.
const tables = localTables("us-east-1", "000000000000");
const OPS = [
  "GetItem",
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "Query",
  "Scan",
  "BatchGetItem",
  "BatchWriteItem",
  "TransactWriteItems",
  "TransactGetItems",
  "ExecuteStatement",
  "DescribeTable",
];
const ITEM_ACTIONS = new Set(
  [
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "BatchGetItem",
    "BatchWriteItem",
    "ConditionCheckItem",
  ].map((a) => `dynamodb:${a}`),
);

const av = fc.oneof(fc.record({ S: fc.string() }), fc.record({ N: fc.string() }), fc.anything());
const item = fc.dictionary(fc.oneof(fc.constantFrom("PK", "SK", "GSI1PK", "__proto__"), fc.string()), av);
const expr = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "PK = :p",
    "#p = :p AND SK BETWEEN :a AND :b",
    "SET #a = :v REMOVE b",
    "SET a[1].b = :v, c = list_append(c, :v)",
    "PK = :p AND PK = :q",
  ),
  fc
    .array(
      fc.constantFrom(
        "PK",
        "#p",
        ":p",
        "=",
        "SET",
        "REMOVE",
        "ADD",
        "AND",
        ",",
        "(",
        ")",
        ".",
        "[0]",
        " ",
        "a",
      ),
      { maxLength: 12 },
    )
    .map((xs) => xs.join(" ")),
);
const request = fc.record(
  {
    TableName: fc.oneof(
      fc.constantFrom("platform-main", "platform-checkpoints", "platform-runs"),
      fc.string(),
      fc.anything(),
    ),
    IndexName: fc.oneof(fc.constant("GSI1"), fc.anything()),
    Key: fc.oneof(item, fc.anything()),
    Item: fc.oneof(item, fc.anything()),
    UpdateExpression: fc.oneof(expr, fc.anything()),
    KeyConditionExpression: expr,
    ProjectionExpression: expr,
    ExpressionAttributeNames: fc.oneof(fc.constant({ "#p": "PK", "#a": "GSI1PK" }), fc.anything()),
    ExpressionAttributeValues: fc.oneof(
      fc.dictionary(fc.constantFrom(":p", ":q", ":a", ":b", ":v"), av),
      fc.anything(),
    ),
    KeyConditions: fc.anything(),
    AttributeUpdates: fc.anything(),
    RequestItems: fc.oneof(
      fc.dictionary(fc.constantFrom("platform-main", "x"), fc.anything()),
      fc.anything(),
    ),
    TransactItems: fc.oneof(
      fc.array(
        fc.dictionary(fc.constantFrom("Put", "Update", "Get", "Delete", "ConditionCheck"), fc.anything()),
      ),
      fc.anything(),
    ),
    Select: fc.anything(),
    ReturnValues: fc.anything(),
  },
  { requiredKeys: [] },
);

describe("DynamoDB request reader (fuzz)", () => {
  it("never throws anything but a 4xx refusal; item calls always carry leading keys", () => {
    fc.assert(
      fc.property(fc.constantFrom(...OPS), fc.oneof(request, fc.anything()), (op, body) => {
        try {
          for (const a of dynamoAuthorizations(op, body, tables)) {
            if (ITEM_ACTIONS.has(a.action))
              expect((a.context["dynamodb:LeadingKeys"] as string[]).length).toBeGreaterThan(0);
          }
        } catch (err) {
          expect(err).toBeInstanceOf(Refused);
          expect((err as Refused).status).toBeLessThan(500);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("any X-Amz-Target gives an operation or a refusal", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `DynamoDB_20120810.${s}`),
          fc.anything(),
        ),
        (t) => {
          try {
            expect(dynamoOperation(t as string)).toMatch(/^[A-Za-z]+$/);
          } catch (err) {
            expect(err).toBeInstanceOf(Refused);
          }
        },
      ),
    );
  });
});
