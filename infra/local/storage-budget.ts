import { join, resolve } from "node:path";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { HeadObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { dynamo, s3 } from "../../shared/aws/clients.ts";
import { config } from "../../shared/config.ts";
import { runtimeKeyPrefixes } from "../../shared/containment/runtime-policy.ts";
import { tableName } from "../../shared/tables.ts";
import { type BudgetScope, StorageBudget, type StorageBudgetOptions } from "./policy-proxy/storage-budget.ts";
import { itemBytes } from "./policy-proxy/write-bytes.ts";

// The local cloud's storage budgets of deployments (policy-proxy/storage-budget.ts), measured from what s3rver and
// DynamoDB Local hold: a deployment's checkpoint blobs (listed under its prefix) and its items in the main and
// checkpoints tables (a scan filtered on its key prefix: its items are spread over its threads' and runs'
// partitions). The platform's own process reads them, as the operator.

/** The bytes a deployment stores now. */
export async function storedBytes(scope: BudgetScope): Promise<number> {
  const prefixes = runtimeKeyPrefixes(scope.tenant_id, scope.deployment_id);
  let total = 0;
  let token: string | undefined;
  do {
    const page = await s3().send(
      new ListObjectsV2Command({
        Bucket: config.checkpointBucket,
        Prefix: prefixes.blobs,
        ContinuationToken: token,
      }),
    );
    for (const o of page.Contents ?? []) total += o.Size ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  for (const [table, prefix] of [
    ["main", prefixes.main],
    ["checkpoints", prefixes.checkpoints],
  ] as const) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamo().send(
        new ScanCommand({
          TableName: tableName(table),
          FilterExpression: "begins_with(PK, :p)",
          ExpressionAttributeValues: { ":p": { S: prefix } },
          ExclusiveStartKey: start as never,
        }),
      );
      for (const item of page.Items ?? []) total += itemBytes(item);
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return total;
}

async function objectSize(bucket: string, key: string): Promise<number | undefined> {
  try {
    return (await s3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength;
  } catch {
    return undefined;
  }
}

/** Where the local cloud keeps the deployments' usage. */
export const storageUsageFile = (dataDir: string) => join(resolve(dataDir), "storage-usage.json");

/** The budgets of every deployment on this local cloud (the settings' limits unless given), usage kept in `file`. */
export function localStorageBudget(
  file: string,
  limits: Partial<Pick<StorageBudgetOptions, "limitBytes" | "maxObjectBytes" | "remeasureAfterMs">> = {},
): StorageBudget {
  return new StorageBudget({
    limitBytes: config.agent.storageBudgetBytes,
    maxObjectBytes: config.agent.maxObjectBytes,
    ...limits,
    file,
    measure: storedBytes,
    objectSize,
  });
}
