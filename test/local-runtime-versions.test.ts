import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { backfillRuntimeVersions } from "../infra/local/runtime-versions.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { tableName } from "../shared/tables.ts";
import "./helpers/cloud.ts";

// A DATA_DIR from before the router ran locally: its live deployments get the version the router reads.
describe("local runtime versions of an earlier data folder", () => {
  it("a live deployment without one gets its active revision's id; others are left as they are", async () => {
    const PK = { S: `T#${crypto.randomUUID()}#DEPLOYMENT` };
    const put = (SK: string, extra: Record<string, { S: string }>) =>
      dynamo().send(
        new PutItemCommand({ TableName: tableName("main"), Item: { PK, SK: { S: SK }, ...extra } }),
      );
    await put("legacy", { active_revision_id: { S: "rev-1" } });
    await put("current", { active_revision_id: { S: "rev-2" }, active_runtime_version: { S: "7" } });
    await put("never-deployed", {});
    expect(await backfillRuntimeVersions()).toBeGreaterThanOrEqual(1);
    const version = async (SK: string) =>
      (await dynamo().send(new GetItemCommand({ TableName: tableName("main"), Key: { PK, SK: { S: SK } } })))
        .Item?.active_runtime_version?.S;
    expect(await version("legacy")).toBe("rev-1");
    expect(await version("current")).toBe("7");
    expect(await version("never-deployed")).toBeUndefined();
    // Idempotent: nothing of these is changed again.
    await backfillRuntimeVersions();
    expect(await version("legacy")).toBe("rev-1");
  });
});
