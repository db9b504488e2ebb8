import { config } from "./config.ts";

// The table definitions. The CDK data stack and the local cloud both create tables from this list.
export interface IndexDef {
  name: string;
  partitionKey: string;
  sortKey?: string;
}
export interface TableDef {
  /** Logical id; the physical name is TABLE_<ID> from the environment, else prefix + id. */
  id: string;
  partitionKey: string;
  sortKey?: string;
  indexes?: IndexDef[];
  ttlAttribute?: string;
}

export const TABLES = {
  /** Workspaces, API keys, tokens, deployments, destinations, exports: everything keyed PK/SK by tenant. */
  main: {
    id: "main",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [{ name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" }],
    ttlAttribute: "expires_at",
  },
} as const satisfies Record<string, TableDef>;

export type TableId = keyof typeof TABLES;

export function tableName(id: TableId): string {
  return process.env[`TABLE_${id.toUpperCase()}`] ?? `${config.tablePrefix}${id}`;
}

export function tableEnvName(id: TableId): string {
  return `TABLE_${id.toUpperCase()}`;
}
