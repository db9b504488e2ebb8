import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { getItem, putItem, queryAll, toItem } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { Conflict } from "../errors.ts";
import { deploymentKeys } from "../records/control.ts";
import { tenants } from "../records/identity.ts";
import { tableName } from "../tables.ts";

// A workspace's deployments are capped (issue 33): each one is a Lambda function with reserved concurrency and
// an IAM role in AWS, both limited per account, so one workspace must not use them up for every other. The cap
// holds under concurrent creates: a counter record per workspace is added to in the very transaction that
// creates a deployment, on the condition that it is below the cap, and taken from in the one that deletes it.
// A workspace whose deployments predate the counter gets it from one consistent count, written only if absent:
// until it exists no create or delete can commit (both need it), so the count cannot miss one.
//   count   PK T#<tenant>#DEPLOYMENTCOUNT   SK COUNT   `n` deployments not deleted

const countKey = (tenant: string) => ({ PK: `${deploymentKeys.pk(tenant)}COUNT`, SK: "COUNT" });

/** The workspace's cap: its record's own (`max_deployments`, set by the operator), else the setting. */
export async function maxDeployments(tenant: string): Promise<number> {
  return (await tenants.get(tenant, false))?.max_deployments ?? config.workspaceMaxDeployments;
}

/** The Update of a create's transaction: one more deployment, only while there are fewer than `max`. */
export function oneMoreDeployment(tenant: string, max: number): TransactWriteItem {
  return {
    Update: {
      TableName: tableName("main"),
      Key: toItem(countKey(tenant)),
      UpdateExpression: "ADD n :one",
      ConditionExpression: "n < :max",
      ExpressionAttributeValues: toItem({ ":one": 1, ":max": max }),
    },
  };
}

/** The Update of a delete's transaction: one deployment fewer. */
export function oneDeploymentLess(tenant: string): TransactWriteItem {
  return {
    Update: {
      TableName: tableName("main"),
      Key: toItem(countKey(tenant)),
      UpdateExpression: "ADD n :less",
      ConditionExpression: "attribute_exists(n)",
      ExpressionAttributeValues: toItem({ ":less": -1 }),
    },
  };
}

/** Makes the workspace's counter from its deployments if it has none yet. */
export async function ensureDeploymentCount(tenant: string): Promise<void> {
  if (await getItem("main", countKey(tenant), true)) return;
  const existing = await queryAll("main", {
    KeyConditionExpression: "PK = :pk",
    ProjectionExpression: "SK",
    ConsistentRead: true,
    values: { ":pk": deploymentKeys.pk(tenant) },
  });
  await putItem(
    "main",
    { ...countKey(tenant), n: existing.length },
    { ConditionExpression: "attribute_not_exists(PK)" },
  ).catch((err: { name?: string }) => {
    // Another request made it first, from the same count.
    if (err?.name !== "ConditionalCheckFailedException") throw err;
  });
}

/** The 409 of a create beyond the cap. */
export const tooManyDeployments = (max: number) =>
  new Conflict(
    `This workspace has ${max} deployments, the most it may have (WORKSPACE_MAX_DEPLOYMENTS): delete one first`,
  );
