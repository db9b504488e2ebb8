import {
  type AttributeValue,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand,
  type QueryCommandInput,
  TransactionCanceledException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { type TableId, tableName } from "../tables.ts";
import { dynamo } from "./clients.ts";

// Thin item helpers over the DynamoDB client: plain JS objects in and out. `Item` is an item whose shape the
// caller does not know (marshalling, expression values, batch plumbing); code that reads a record names its
// type (shared/records/) and gets it from these helpers' type parameter or from a repository (./repository.ts).
// The one `any` of the item layer: the plumbing passes items it does not read; records are typed.
export type Item = Record<string, any>;
/** The primary key of an item: every table here is keyed PK (partition) and SK (sort). */
export interface Key {
  PK: string;
  SK: string;
}
// Imprecise numbers: a JSON number past 2^53 is already a double, so storing it loses nothing more; DynamoDB
// refuses only those outside its own range (a 422, shared/errors.ts storeLimitError).
const opts = { removeUndefinedValues: true, convertClassInstanceToMap: true, allowImpreciseNumbers: true };

export const toItem = (v: Item) => marshall(v, opts);
// Every number back as a JS number, as JSON has them (unmarshall's default makes a BigInt of a large integer,
// which JSON.stringify refuses, and throws on a large non-integer).
const readOpts = { wrapNumbers: (n: string) => Number(n) };
export const fromItem = <T extends object = Item>(v: Record<string, AttributeValue>) =>
  unmarshall(v, readOpts) as T;

export async function getItem<T extends object = Item>(
  table: TableId,
  key: Key,
  consistent = false,
): Promise<T | undefined> {
  const out = await dynamo().send(
    new GetItemCommand({ TableName: tableName(table), Key: toItem(key), ConsistentRead: consistent }),
  );
  return out.Item ? fromItem<T>(out.Item) : undefined;
}

/** The condition of a put that only creates: no item has the key yet. */
export const CREATE_ONLY = { ConditionExpression: "attribute_not_exists(PK)" } as const;

/** The PutItem input (also a transaction's Put); `extra` adds a condition (`CREATE_ONLY`) and the like. */
export function putInput(
  table: TableId,
  item: Item,
  extra: Omit<PutItemCommandInput, "TableName" | "Item"> = {},
) {
  return { TableName: tableName(table), Item: toItem(item), ...extra };
}

export async function putItem(
  table: TableId,
  item: Item,
  extra: Omit<PutItemCommandInput, "TableName" | "Item"> = {},
): Promise<void> {
  await dynamo().send(new PutItemCommand(putInput(table, item, extra)));
}

export async function deleteItem(table: TableId, key: Key): Promise<void> {
  await dynamo().send(new DeleteItemCommand({ TableName: tableName(table), Key: toItem(key) }));
}

/** A query's input without the table; `values` are plain JS and marshalled here. */
export type QueryInput = Omit<QueryCommandInput, "TableName" | "ExpressionAttributeValues"> & {
  values?: Item;
};

/** One page of a query. */
export async function queryPage<T extends object = Item>(
  table: TableId,
  input: QueryInput,
): Promise<{ items: T[]; lastKey?: Item }> {
  const { values, ...rest } = input;
  const out = await dynamo().send(
    new QueryCommand({
      TableName: tableName(table),
      ...rest,
      ExpressionAttributeValues: values ? toItem(values) : undefined,
    }),
  );
  return {
    items: (out.Items ?? []).map((i) => fromItem<T>(i)),
    lastKey: out.LastEvaluatedKey ? fromItem(out.LastEvaluatedKey) : undefined,
  };
}

/**
 * Every page of a query, in order; each page is read when the one before has been taken, so a caller that
 * breaks off reads no further. A `Limit` function is asked before each page (read no more than still wanted).
 */
export async function* queryPages<T extends object = Item>(
  table: TableId,
  input: Omit<QueryInput, "ExclusiveStartKey" | "Limit"> & { Limit?: number | (() => number) },
): AsyncGenerator<T[]> {
  const { Limit, ...rest } = input;
  let start: Item | undefined;
  do {
    const page = await queryPage<T>(table, {
      ...rest,
      Limit: typeof Limit === "function" ? Limit() : Limit,
      ExclusiveStartKey: start ? toItem(start) : undefined,
    });
    yield page.items;
    start = page.lastKey;
  } while (start);
}

/** Every item a query matches. */
export async function queryAll<T extends object = Item>(
  table: TableId,
  input: Parameters<typeof queryPages>[1],
): Promise<T[]> {
  const all: T[] = [];
  for await (const items of queryPages<T>(table, input)) all.push(...items);
  return all;
}

export function isConditionFailure(err: unknown): boolean {
  return (err as { name?: string })?.name === "ConditionalCheckFailedException";
}

/** The per-item cancellation codes of a failed transaction (undefined for any other error). */
export function cancelCodes(err: unknown): (string | undefined)[] | undefined {
  if (!(err instanceof TransactionCanceledException)) return undefined;
  return (err.CancellationReasons ?? []).map((r) => r.Code);
}

/** Runs a transaction, retrying when another transaction on the same items got in the way. */
export async function transact(items: TransactWriteItem[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await dynamo().send(new TransactWriteItemsCommand({ TransactItems: items }));
      return;
    } catch (err) {
      const codes = cancelCodes(err);
      if (attempt >= 6 || !codes?.includes("TransactionConflict") || codes.includes("ConditionalCheckFailed"))
        throw err;
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt * Math.random()));
    }
  }
}

export interface ConditionalUpdate {
  /** Attributes to set; a dotted name sets a map entry (`errors.retry_0`). */
  set?: Item;
  /** Entries to set in map attributes, by attribute: entry names are taken as they are (dots and all). */
  setIn?: Record<string, Item>;
  /** Numbers to add. */
  add?: Record<string, number>;
  /** Lists to append to (created when missing). */
  append?: Record<string, unknown[]>;
  /** Attributes to remove. */
  remove?: string[];
  /** Conditions: attribute equals value. */
  when?: Item;
  /** Conditions: attribute is one of the values. */
  in?: Record<string, readonly unknown[]>;
  /** Conditions: attribute is none of the values. */
  notIn?: Record<string, readonly unknown[]>;
  /** Conditions: attribute is missing or at most the number. */
  atMost?: Record<string, number>;
  /** Conditions: attribute is missing. */
  absent?: string[];
}

/** The UpdateItem input (also a transaction's Update) for a conditional update of an existing item. */
export function updateInput(table: TableId, key: Key, u: ConditionalUpdate) {
  const names: Record<string, string> = {};
  const values: Item = {};
  let n = 0;
  const name = (k: string) =>
    k
      .split(".")
      .map((part) => {
        const id = `#n${n++}`;
        names[id] = part;
        return id;
      })
      .join(".");
  const value = (v: unknown) => {
    const id = `:v${n++}`;
    values[id] = v;
    return id;
  };
  const literal = (k: string) => {
    const id = `#n${n++}`;
    names[id] = k;
    return id;
  };
  const sets = Object.entries(u.set ?? {}).map(([k, v]) => `${name(k)} = ${value(v)}`);
  for (const [attr, entries] of Object.entries(u.setIn ?? {}))
    for (const [k, v] of Object.entries(entries)) sets.push(`${name(attr)}.${literal(k)} = ${value(v)}`);
  for (const [k, v] of Object.entries(u.append ?? {}))
    sets.push(`${name(k)} = list_append(if_not_exists(${name(k)}, ${value([])}), ${value(v)})`);
  const adds = Object.entries(u.add ?? {}).map(([k, v]) => `${name(k)} ${value(v)}`);
  const conds = ["attribute_exists(PK)"];
  for (const [k, v] of Object.entries(u.when ?? {})) conds.push(`${name(k)} = ${value(v)}`);
  for (const [k, vs] of Object.entries(u.in ?? {})) conds.push(`${name(k)} IN (${vs.map(value).join(", ")})`);
  for (const [k, vs] of Object.entries(u.notIn ?? {}))
    if (vs.length) conds.push(`NOT (${name(k)} IN (${vs.map(value).join(", ")}))`);
  for (const [k, v] of Object.entries(u.atMost ?? {})) conds.push(`NOT (${name(k)} > ${value(v)})`);
  for (const k of u.absent ?? []) conds.push(`attribute_not_exists(${name(k)})`);
  const removes = (u.remove ?? []).map(name);
  const expr = [
    sets.length ? `SET ${sets.join(", ")}` : "",
    adds.length ? `ADD ${adds.join(", ")}` : "",
    removes.length ? `REMOVE ${removes.join(", ")}` : "",
  ];
  return {
    TableName: tableName(table),
    Key: toItem(key),
    UpdateExpression: expr.filter(Boolean).join(" "),
    ConditionExpression: conds.join(" AND "),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: Object.keys(values).length ? toItem(values) : undefined,
  };
}

/** One UpdateItem on an existing item under the given conditions; false when a condition did not hold. */
export async function conditionalUpdate(table: TableId, key: Key, u: ConditionalUpdate): Promise<boolean> {
  try {
    await dynamo().send(new UpdateItemCommand(updateInput(table, key, u)));
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** `conditionalUpdate` that answers with the item as written; undefined when a condition did not hold. */
export async function updateReturning<T extends object = Item>(
  table: TableId,
  key: Key,
  u: ConditionalUpdate,
): Promise<T | undefined> {
  try {
    const out = await dynamo().send(
      new UpdateItemCommand({ ...updateInput(table, key, u), ReturnValues: "ALL_NEW" }),
    );
    return out.Attributes ? fromItem<T>(out.Attributes) : undefined;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/**
 * One UpdateItem that adds `n` to a counter, creating the item (with `onCreate`'s attributes) when missing; answers
 * the counter's new value. A rejection means nothing was added (the SDK's retries aside).
 */
export async function addToCounter(
  table: TableId,
  key: Key,
  counter: string,
  n: number,
  onCreate: Item = {},
) {
  const names: Record<string, string> = { "#c": counter };
  const values: Item = { ":n": n };
  const sets = Object.entries(onCreate).map(([k, v], i) => {
    names[`#s${i}`] = k;
    values[`:s${i}`] = v;
    return `#s${i} = if_not_exists(#s${i}, :s${i})`;
  });
  const out = await dynamo().send(
    new UpdateItemCommand({
      TableName: tableName(table),
      Key: toItem(key),
      UpdateExpression: `ADD #c :n${sets.length ? ` SET ${sets.join(", ")}` : ""}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: toItem(values),
      ReturnValues: "UPDATED_NEW",
    }),
  );
  return Number(fromItem(out.Attributes ?? {})[counter]);
}
