import { batchWrite } from "../../aws/batch.ts";
import { queryAll, queryPages } from "../../aws/ddb.ts";
import { agentKeys, esc } from "../../records/agent.ts";
import { deleteThreadCheckpoints } from "../checkpoint/admin.ts";
import { deleteEventLog } from "../stream/event-log.ts";

// Deleting a deployment deletes what its agent server stored: every thread with its runs, their event logs and
// checkpoints, the assistants, the crons and the long-term store. Idempotent, so a retried task finishes the job.
const all = (table: "main" | "checkpoints", pk: string) =>
  queryAll(table, { KeyConditionExpression: "PK = :pk", values: { ":pk": pk } });

export async function purgeDeploymentData(
  tenant: string,
  deploymentId: string,
): Promise<{ threads: number }> {
  const scope = `${tenant}#${deploymentId}`;
  let threads = 0;
  // A Query page of threads at a time (keys only): a large deployment is never loaded whole.
  for await (const page of queryPages("main", {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": agentKeys.threadsPk(scope) },
    ProjectionExpression: "PK, SK",
  }))
    for (const t of page) {
      threads++;
      const threadId = t.SK as string;
      const runs = await all("main", agentKeys.runsPk(scope, threadId));
      for (const r of runs) await deleteEventLog(scope, r.SK as string);
      await batchWrite(
        "main",
        runs.map((r) => ({ delete: { PK: r.PK, SK: r.SK } })),
      );
      await deleteThreadCheckpoints(scope, threadId);
      await batchWrite("main", [{ delete: { PK: t.PK, SK: t.SK } }]);
    }
  const assistants = await all("main", agentKeys.assistantsPk(scope));
  const cronItems = await all("main", agentKeys.cronsPk(scope));
  await batchWrite(
    "main",
    [...assistants, ...cronItems].map((a) => ({ delete: { PK: a.PK, SK: a.SK } })),
  );
  const store = await all("checkpoints", `${esc(scope)}#STORE`);
  await batchWrite(
    "checkpoints",
    store.map((s) => ({ delete: { PK: s.PK, SK: s.SK } })),
  );
  return { threads };
}
