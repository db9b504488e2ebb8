import { TABLES, tableName } from "../../../shared/tables.ts";
import type { DynamoTables } from "./dynamodb-request.ts";

/** The account id in the local cloud's ARNs (as its emulated services use). */
export const LOCAL_ACCOUNT = "000000000000";

/** The local tables with their partition keys, by physical name (read when the proxy is made). */
export function localTables(region: string, account: string): DynamoTables {
  const byName = new Map(Object.values(TABLES).map((t) => [tableName(t.id), t] as const));
  const prefix = `arn:aws:dynamodb:${region}:${account}:table/`;
  const nameOf = (table: string) => (table.startsWith(prefix) ? table.slice(prefix.length) : table);
  return {
    arn: (table) => (table.startsWith("arn:") ? table : `${prefix}${table}`),
    partitionKey(table, index) {
      const def = byName.get(nameOf(table));
      if (!def) return undefined;
      if (index === undefined) return def.partitionKey;
      return (def.indexes as readonly { name: string; partitionKey: string }[]).find((i) => i.name === index)
        ?.partitionKey;
    },
  };
}
