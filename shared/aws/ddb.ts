import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { type TableId, tableName } from "../tables.ts";
import { dynamo } from "./clients.ts";

// Thin item helpers over the DynamoDB client: plain JS objects in and out.
export type Item = Record<string, any>;
const opts = { removeUndefinedValues: true, convertClassInstanceToMap: true };

export const toItem = (v: Item) => marshall(v, opts);
export const fromItem = (v: Record<string, any>) => unmarshall(v) as Item;

export async function getItem(table: TableId, key: Item, consistent = false): Promise<Item | undefined> {
  const out = await dynamo().send(
    new GetItemCommand({ TableName: tableName(table), Key: toItem(key), ConsistentRead: consistent }),
  );
  return out.Item ? fromItem(out.Item) : undefined;
}

export async function putItem(
  table: TableId,
  item: Item,
  extra: Omit<PutItemCommandInput, "TableName" | "Item"> = {},
): Promise<void> {
  await dynamo().send(new PutItemCommand({ TableName: tableName(table), Item: toItem(item), ...extra }));
}

export async function deleteItem(table: TableId, key: Item): Promise<void> {
  await dynamo().send(new DeleteItemCommand({ TableName: tableName(table), Key: toItem(key) }));
}

/** One page of a query; `values` are plain JS and marshalled here. */
export async function queryPage(
  table: TableId,
  input: Omit<QueryCommandInput, "TableName" | "ExpressionAttributeValues"> & { values?: Item },
): Promise<{ items: Item[]; lastKey?: Item }> {
  const { values, ...rest } = input;
  const out = await dynamo().send(
    new QueryCommand({
      TableName: tableName(table),
      ...rest,
      ExpressionAttributeValues: values ? toItem(values) : undefined,
    }),
  );
  return {
    items: (out.Items ?? []).map(fromItem),
    lastKey: out.LastEvaluatedKey ? fromItem(out.LastEvaluatedKey) : undefined,
  };
}

export function isConditionFailure(err: unknown): boolean {
  return (err as { name?: string })?.name === "ConditionalCheckFailedException";
}
