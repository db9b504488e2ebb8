import { describe, expect, it } from "vitest";
import { type DynamoTables, dynamoAuthorizations, dynamoOperation } from "./dynamodb-request.ts";
import { Refused } from "./refusal.ts";

// What AWS checks for each DynamoDB call: the action (per transaction element), the table or index ARN, and
// the condition keys, with expression placeholders resolved.
const ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/";
const tables: DynamoTables = {
  arn: (t) => (t.startsWith("arn:") ? t : `${ARN}${t}`),
  partitionKey: (t, index) =>
    !["main", "checkpoints"].includes(t.replace(ARN, ""))
      ? undefined
      : index === undefined
        ? "PK"
        : index === "GSI1"
          ? "GSI1PK"
          : undefined,
};
const S = (s: string) => ({ S: s });
const auth = (op: string, body: unknown) => dynamoAuthorizations(op, body, tables);
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Refused);
    return (e as Refused).code;
  }
  return "accepted";
};

describe("DynamoDB calls as IAM authorization requests", () => {
  it("the operation comes from X-Amz-Target", () => {
    expect(dynamoOperation("DynamoDB_20120810.PutItem")).toBe("PutItem");
    expect(code(() => dynamoOperation("TrentService.Decrypt"))).toBe("UnknownOperationException");
    expect(code(() => dynamoOperation(undefined))).toBe("UnknownOperationException");
  });

  it("PutItem: the item's partition key, its attribute names and ReturnValues", () => {
    expect(
      auth("PutItem", {
        TableName: "main",
        Item: { PK: S("A#1"), SK: S("x"), GSI1PK: S("g") },
        ReturnValues: "ALL_OLD",
      }),
    ).toEqual([
      {
        action: "dynamodb:PutItem",
        resource: `${ARN}main`,
        context: {
          "dynamodb:LeadingKeys": ["A#1"],
          "dynamodb:Attributes": ["PK", "SK", "GSI1PK"],
          "dynamodb:ReturnValues": "ALL_OLD",
        },
      },
    ]);
  });

  it("UpdateItem: the first segment of every SET/REMOVE/ADD/DELETE path, names resolved, and the key's names", () => {
    const [a] = auth("UpdateItem", {
      TableName: "main",
      Key: { PK: S("A#1"), SK: S("x") },
      UpdateExpression:
        "SET #a.b[2] = list_append(#a.b, :v), c = if_not_exists(c, :z) REMOVE #g ADD n :one DELETE s :set",
      ExpressionAttributeNames: { "#a": "doc", "#g": "GSI1SK" },
    });
    expect(a.context["dynamodb:Attributes"]).toEqual(["PK", "SK", "doc", "c", "GSI1SK", "n", "s"]);
    expect(a.context["dynamodb:LeadingKeys"]).toEqual(["A#1"]);
    const [legacy] = auth("UpdateItem", {
      TableName: "main",
      Key: { PK: S("A#1") },
      AttributeUpdates: { GSI1PK: { Action: "PUT", Value: S("x") } },
    });
    expect(legacy.context["dynamodb:Attributes"]).toContain("GSI1PK");
  });

  it("an undefined placeholder or an unreadable update expression is refused", () => {
    expect(
      code(() =>
        auth("UpdateItem", { TableName: "main", Key: { PK: S("A") }, UpdateExpression: "SET #x = :v" }),
      ),
    ).toBe("ValidationException");
    expect(
      code(() =>
        auth("UpdateItem", {
          TableName: "main",
          Key: { PK: S("A") },
          UpdateExpression: "SET a = :v; REMOVE b",
        }),
      ),
    ).toBe("ValidationException");
    expect(
      code(() => auth("UpdateItem", { TableName: "main", Key: { PK: S("A") }, UpdateExpression: "a = :v" })),
    ).toBe("ValidationException");
  });

  it("GetItem and DeleteItem: the key's partition value; projections as the attributes read", () => {
    const [g] = auth("GetItem", {
      TableName: "main",
      Key: { PK: S("A#1"), SK: S("x") },
      ProjectionExpression: "#n, b.c, d[1]",
      ExpressionAttributeNames: { "#n": "name" },
    });
    expect(g.context).toEqual({ "dynamodb:LeadingKeys": ["A#1"], "dynamodb:Attributes": ["name", "b", "d"] });
    const [d] = auth("DeleteItem", { TableName: "main", Key: { PK: { N: "12" }, SK: S("x") } });
    expect(d).toMatchObject({ action: "dynamodb:DeleteItem", context: { "dynamodb:LeadingKeys": ["12"] } });
  });

  it("Query: the key condition's equality on the partition key (placeholders resolved), on the index when named", () => {
    const [q] = auth("Query", {
      TableName: "main",
      KeyConditionExpression: "#p = :p AND SK BETWEEN :a AND :b",
      ExpressionAttributeNames: { "#p": "PK" },
      ExpressionAttributeValues: { ":p": S("A#1"), ":a": S("a"), ":b": S("b") },
      Select: "COUNT",
    });
    expect(q).toEqual({
      action: "dynamodb:Query",
      resource: `${ARN}main`,
      context: { "dynamodb:LeadingKeys": ["A#1"], "dynamodb:Select": "COUNT" },
    });
    const [i] = auth("Query", {
      TableName: "main",
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :p",
      ExpressionAttributeValues: { ":p": S("D#1") },
    });
    expect(i).toMatchObject({
      resource: `${ARN}main/index/GSI1`,
      context: { "dynamodb:LeadingKeys": ["D#1"] },
    });
    const [legacy] = auth("Query", {
      TableName: "main",
      KeyConditions: { PK: { ComparisonOperator: "EQ", AttributeValueList: [S("A#2")] } },
    });
    expect(legacy.context["dynamodb:LeadingKeys"]).toEqual(["A#2"]);
  });

  it("a Query that does not pin the partition key once is refused, never evaluated with no leading key", () => {
    const q = (expr: string) => () =>
      auth("Query", {
        TableName: "main",
        KeyConditionExpression: expr,
        ExpressionAttributeValues: { ":a": S("A"), ":b": S("B") },
      });
    expect(code(q("SK = :a"))).toBe("ValidationException");
    expect(code(q("PK = :a AND PK = :b"))).toBe("ValidationException");
    expect(code(q("begins_with(PK, :a)"))).toBe("ValidationException");
    expect(
      code(() => auth("Query", { TableName: "main", IndexName: "NOPE", KeyConditionExpression: "PK = :a" })),
    ).toBe("ResourceNotFoundException");
  });

  it("BatchWriteItem and BatchGetItem: one check per table with all its items' partition keys", () => {
    const w = auth("BatchWriteItem", {
      RequestItems: {
        main: [
          { PutRequest: { Item: { PK: S("A#1"), SK: S("1"), x: S("") } } },
          { DeleteRequest: { Key: { PK: S("A#2"), SK: S("2") } } },
        ],
        checkpoints: [{ PutRequest: { Item: { PK: S("C#1"), SK: S("1") } } }],
      },
    });
    expect(w).toEqual([
      {
        action: "dynamodb:BatchWriteItem",
        resource: `${ARN}main`,
        context: { "dynamodb:LeadingKeys": ["A#1", "A#2"], "dynamodb:Attributes": ["PK", "SK", "x"] },
      },
      {
        action: "dynamodb:BatchWriteItem",
        resource: `${ARN}checkpoints`,
        context: { "dynamodb:LeadingKeys": ["C#1"], "dynamodb:Attributes": ["PK", "SK"] },
      },
    ]);
    const g = auth("BatchGetItem", {
      RequestItems: {
        main: {
          Keys: [
            { PK: S("A#1"), SK: S("1") },
            { PK: S("B#1"), SK: S("1") },
          ],
        },
      },
    });
    expect(g[0].context["dynamodb:LeadingKeys"]).toEqual(["A#1", "B#1"]);
  });

  it("TransactWriteItems and TransactGetItems: each element under its own action", () => {
    const t = auth("TransactWriteItems", {
      TransactItems: [
        { Put: { TableName: "main", Item: { PK: S("A"), SK: S("1") } } },
        {
          Update: {
            TableName: "checkpoints",
            Key: { PK: S("C"), SK: S("1") },
            UpdateExpression: "SET v = :v",
          },
        },
        { Delete: { TableName: "main", Key: { PK: S("B"), SK: S("1") } } },
        {
          ConditionCheck: {
            TableName: "main",
            Key: { PK: S("D"), SK: S("1") },
            ConditionExpression: "attribute_exists(PK)",
          },
        },
      ],
    });
    expect(t.map((a) => [a.action, a.context["dynamodb:LeadingKeys"]])).toEqual([
      ["dynamodb:PutItem", ["A"]],
      ["dynamodb:UpdateItem", ["C"]],
      ["dynamodb:DeleteItem", ["B"]],
      ["dynamodb:ConditionCheckItem", ["D"]],
    ]);
    const g = auth("TransactGetItems", {
      TransactItems: [{ Get: { TableName: "main", Key: { PK: S("A"), SK: S("1") } } }],
    });
    expect(g[0].action).toBe("dynamodb:GetItem");
  });

  it("a Scan carries no leading key; PartiQL is refused; other calls are checked on their table", () => {
    expect(auth("Scan", { TableName: "main" })).toEqual([
      { action: "dynamodb:Scan", resource: `${ARN}main`, context: {} },
    ]);
    expect(code(() => auth("ExecuteStatement", { Statement: "SELECT * FROM main" }))).toBe(
      "AccessDeniedException",
    );
    expect(auth("DescribeTable", { TableName: "main" })).toEqual([
      { action: "dynamodb:DescribeTable", resource: `${ARN}main`, context: {} },
    ]);
    expect(auth("ListTables", {})[0].resource).toBe(`${ARN}*`);
  });

  it("an item without its partition key, a key that is not a scalar, or an unknown table is refused", () => {
    expect(code(() => auth("PutItem", { TableName: "main", Item: { SK: S("x") } }))).toBe(
      "ValidationException",
    );
    expect(code(() => auth("GetItem", { TableName: "main", Key: { PK: { L: [] } } }))).toBe(
      "ValidationException",
    );
    expect(code(() => auth("GetItem", { TableName: "other", Key: { PK: S("A") } }))).toBe(
      "ResourceNotFoundException",
    );
    expect(
      code(() =>
        auth("BatchWriteItem", {
          RequestItems: {
            main: [{ PutRequest: { Item: { PK: S("A") } }, DeleteRequest: { Key: { PK: S("B") } } }],
          },
        }),
      ),
    ).toBe("ValidationException");
  });

  it("a table or index name DynamoDB Local would not read as the proxy does (an ARN, other characters) is refused", () => {
    for (const TableName of [
      `${ARN}main`,
      "arn:aws:dynamodb:eu-west-1:111111111111:table/main",
      "ma",
      "main/x",
    ]) {
      expect(
        code(() => auth("GetItem", { TableName, Key: { PK: S("A") } })),
        TableName,
      ).toBe("ValidationException");
      expect(
        code(() => auth("DescribeTable", { TableName })),
        TableName,
      ).toBe("ValidationException");
      expect(
        code(() => auth("BatchGetItem", { RequestItems: { [TableName]: { Keys: [{ PK: S("A") }] } } })),
        TableName,
      ).toBe("ValidationException");
    }
    expect(code(() => auth("Query", { TableName: "main", IndexName: "GSI1/../x", KeyConditions: {} }))).toBe(
      "ValidationException",
    );
  });

  it("a partition key value of two data types is refused, never read as one of them", () => {
    expect(code(() => auth("GetItem", { TableName: "main", Key: { PK: { S: "mine", N: "1" } } }))).toBe(
      "ValidationException",
    );
    expect(
      code(() =>
        auth("TransactWriteItems", {
          TransactItems: [{ Delete: { TableName: "main", Key: { PK: { N: "1", S: "mine" } } } }],
        }),
      ),
    ).toBe("ValidationException");
  });

  it("calls without items are checked on the table they name; any other operation is refused", () => {
    expect(auth("UpdateTimeToLive", { TableName: "main" })[0].resource).toBe(`${ARN}main`);
    expect(auth("TagResource", { ResourceArn: `${ARN}main`, Tags: [] })[0]).toEqual({
      action: "dynamodb:TagResource",
      resource: `${ARN}main`,
      context: {},
    });
    // DynamoDB Local reads the table out of any ARN: one of another region or account is not the one checked.
    expect(
      code(() => auth("TagResource", { ResourceArn: "arn:aws:dynamodb:eu-west-1:111111111111:table/main" })),
    ).toBe("ValidationException");
    // Lower-case operation names are unknown to DynamoDB Local, but IAM matches actions case-insensitively.
    for (const op of [
      "getItem",
      "getitem",
      "RestoreTableFromBackup",
      "ExportTableToPointInTime",
      "CreateBackup",
    ])
      expect(
        code(() => auth(op, { TableName: "main", Key: { PK: S("A") } })),
        op,
      ).toBe("AccessDeniedException");
  });
});
