// DynamoDB's request limits, in one place (Service, account and table quotas in Amazon DynamoDB). Sizes are
// item sizes as DynamoDB counts them: attribute names and values (./write-units.ts `itemBytes`).
export const DDB_LIMITS = {
  /** One item, names and values. */
  itemBytes: 400 * 1024,
  /** One TransactWriteItems call: 100 items, 4 MB (taken as decimal MB, the smaller reading). */
  transactItems: 100,
  transactBytes: 4_000_000,
  /** One BatchWriteItem call: 25 items, 16 MB. */
  batchWriteItems: 25,
  batchWriteBytes: 16_000_000,
} as const;

/** What one write in a request costs beyond its item's size (table name, condition, framing): a margin. */
export const REQUEST_OVERHEAD_BYTES = 256;
