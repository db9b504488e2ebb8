import type {
  AttributeValue,
  BatchWriteItemCommandInput,
  PutItemCommandInput,
  TransactWriteItemsCommandInput,
} from "@aws-sdk/client-dynamodb";
import { type IndexDef, TABLES, type TableDef, tableName } from "../tables.ts";

// Write request units as DynamoDB bills them, worked out from a request (cost estimates of benchmarks): an item
// costs one unit per started KB, twice that inside a transaction, and once more in each global secondary index it
// lands in (the whole item, or what an INCLUDE index holds of it). DynamoDB Local's own ConsumedCapacity does not follow these rules
// for transactions (3 small puts: 4 units, not 6; a multi-table transaction's total repeated per table).
type Item = Record<string, AttributeValue>;

/** The input of a DynamoDB write command: the members read here (PutItem, BatchWriteItem, TransactWriteItems). */
export type WriteInput = Partial<Pick<PutItemCommandInput, "TableName" | "Item">> &
  Partial<Pick<BatchWriteItemCommandInput, "RequestItems">> &
  Partial<Pick<TransactWriteItemsCommandInput, "TransactItems">>;

function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|e.*$/gi, "").length / 2) + 1;
  if (v.B !== undefined) return v.B.byteLength;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (v.NS) return v.NS.reduce((n, s) => n + valueBytes({ N: s }), 0);
  if (v.BS) return v.BS.reduce((n, b) => n + b.byteLength, 0);
  if (v.L) return 3 + v.L.reduce((n, e) => n + 1 + valueBytes(e), 0);
  if (v.M) return 3 + itemBytes(v.M) + Object.keys(v.M).length;
  return 0;
}

/** An item's size: its attribute names and values. */
export function itemBytes(item: Item): number {
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + valueBytes(v), 0);
}

const defByName = (table: string): TableDef | undefined =>
  (Object.values(TABLES) as TableDef[]).find((t) => tableName(t.id as never) === table);

const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** The part of `item` an INCLUDE index holds: the table's and the index's keys, and its included attributes. */
function projected(item: Item, def: TableDef, index: IndexDef): Item {
  const names = [def.partitionKey, def.sortKey, index.partitionKey, index.sortKey, ...(index.include ?? [])];
  return Object.fromEntries(names.filter((n) => n && item[n] !== undefined).map((n) => [n, item[n!]!]));
}

/** Units of writing `item` whole into `table`: the table, and each index whose key the item carries. */
export function putUnits(table: string, item: Item, transactional = false): number {
  const kb = units(itemBytes(item));
  const def = defByName(table);
  const indexed = (def?.indexes ?? []).filter((i) => item[i.partitionKey] !== undefined);
  const inIndexes = indexed.reduce(
    (n, i: IndexDef) => n + (i.include ? units(itemBytes(projected(item, def!, i))) : kb),
    0,
  );
  return kb * (transactional ? 2 : 1) + inIndexes;
}

/**
 * Estimated units of a write request, or undefined for those whose cost depends on the stored item (a plain
 * UpdateItem or DeleteItem: DynamoDB Local's figure is taken for those). Inside a transaction an update, delete or
 * condition check is counted as a 1 KB item (the agent server's items are about that size).
 */
export function writeUnits(command: string, input: WriteInput): number | undefined {
  // The members each command requires are there: the SDK sent the request.
  if (command === "PutItemCommand") return putUnits(input.TableName!, input.Item!);
  if (command === "BatchWriteItemCommand")
    return Object.entries(input.RequestItems ?? {}).reduce(
      (n, [table, reqs]) =>
        n + reqs.reduce((m, r) => m + (r.PutRequest ? putUnits(table, r.PutRequest.Item!) : 1), 0),
      0,
    );
  if (command === "TransactWriteItemsCommand")
    return (input.TransactItems ?? []).reduce(
      (n, t) => n + (t.Put ? putUnits(t.Put.TableName!, t.Put.Item!, true) : 2),
      0,
    );
  return undefined;
}
