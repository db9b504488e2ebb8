import { ScanCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { GetFunctionCommand } from "@aws-sdk/client-lambda";
import { dynamo, lambdaControl } from "../../shared/aws/clients.ts";
import { runtimeFunctionName } from "../../shared/containment/runtime-policy.ts";
import { redeploy } from "../../shared/control/deployment-lifecycle.ts";
import { logger } from "../../shared/log.ts";
import { tableName } from "../../shared/tables.ts";
import { oncePerDataFolder } from "./migrations.ts";

// A DATA_DIR from before agent-server requests passed the router bundle locally: a deployment live then has no
// `active_runtime_version`, which the router reads (AWS's deploy step has always set it) and answers 503 without.
// A local runtime serves its deployment's active revision, so that revision's id is its version. Set once per
// data folder at start (infra/local/migrations.ts), conditionally on the record being as it was read.

/** Gives every live deployment record without a runtime version its active revision's id; answers how many. */
export async function backfillRuntimeVersions(): Promise<number> {
  const TableName = tableName("main");
  let done = 0;
  let ExclusiveStartKey: Record<string, never> | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName,
        FilterExpression:
          "begins_with(PK, :t) AND attribute_exists(active_revision_id) AND attribute_not_exists(active_runtime_version)",
        ProjectionExpression: "PK, SK, active_revision_id",
        ExpressionAttributeValues: { ":t": { S: "T#" } },
        ExclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) {
      if (!item.PK?.S?.endsWith("#DEPLOYMENT") || !item.active_revision_id?.S) continue;
      try {
        await dynamo().send(
          new UpdateItemCommand({
            TableName,
            Key: { PK: item.PK, SK: item.SK! },
            UpdateExpression: "SET active_runtime_version = :r",
            ConditionExpression: "active_revision_id = :r AND attribute_not_exists(active_runtime_version)",
            ExpressionAttributeValues: { ":r": item.active_revision_id },
          }),
        );
        done++;
      } catch (err) {
        // Changed since the scan (a deploy set it, or the deployment moved on): left as it is now.
        if ((err as Error).name !== "ConditionalCheckFailedException") throw err;
      }
    }
    ExclusiveStartKey = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (ExclusiveStartKey);
  return done;
}

/** The backfill, once per data folder. */
export function backfillRuntimeVersionsOnce(): Promise<void> {
  return oncePerDataFolder("local-runtime-version", async () => {
    const done = await backfillRuntimeVersions();
    if (done) logger.info("deployments given their local runtime version", { deployments: done });
  });
}

/** Whether the local Lambda has the function at that version (asked through its API, as the operator). */
async function functionHasVersion(FunctionName: string, Qualifier: string | undefined): Promise<boolean> {
  if (!Qualifier) return false;
  return lambdaControl()
    .send(new GetFunctionCommand({ FunctionName, Qualifier }))
    .then(
      () => true,
      (err) => {
        if ((err as Error)?.name === "ResourceNotFoundException") return false;
        throw err;
      },
    );
}

/**
 * A DATA_DIR from before deployments' runtimes were functions (the deploy step's, lambda-host.ts): a live
 * deployment whose function lacks its active version has its active revision redeployed (its artifact again, no
 * build), which creates the function as any deploy does. A deployment with a revision in flight is left to it.
 * Answers how many redeploys were started; run at every start (a deployment with its function costs one lookup).
 */
export async function redeployMissingRuntimes(): Promise<number> {
  let started = 0;
  let ExclusiveStartKey: Record<string, never> | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName: tableName("main"),
        FilterExpression: "begins_with(PK, :t) AND attribute_exists(active_revision_id)",
        ProjectionExpression: "PK, SK, active_revision_id, active_runtime_version, latest_revision_id",
        ExpressionAttributeValues: { ":t": { S: "T#" } },
        ExclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const tenant = /^T#(.+)#DEPLOYMENT$/.exec(item.PK?.S ?? "")?.[1];
      const id = item.SK?.S;
      const active = item.active_revision_id?.S;
      if (!tenant || !id || !active || item.latest_revision_id?.S !== active) continue;
      if (await functionHasVersion(runtimeFunctionName(id), item.active_runtime_version?.S)) continue;
      try {
        await redeploy(tenant, id, active);
        started++;
      } catch (err) {
        logger.warn("redeploying a deployment without its runtime function failed", {
          deployment_id: id,
          error: err,
        });
      }
    }
    ExclusiveStartKey = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (ExclusiveStartKey);
  if (started) logger.info("deployments without their runtime function redeployed", { deployments: started });
  return started;
}
