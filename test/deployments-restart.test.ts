import { afterAll, expect, it } from "vitest";
import { platformApi, waitFor } from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// Local executions die with the process (DESIGN.md): kill -9 the platform while a revision is in its pipeline,
// start it again on the same data, and the sweeper re-drives the revision from the phase its record shows.
let platform: RunningPlatform | undefined;
const repo = gitRepo(graphRepoFiles(["step"]));
afterAll(async () => {
  await platform?.stop();
  repo.remove();
});

it("a revision in flight when the platform is killed ends DEPLOYED after the restart", async () => {
  platform = await startPlatform({ LOG_LEVEL: "error" }, { sharedDynamoDb: sharedDynamoDb() });
  let api = platformApi(platform);
  const created = await api("POST", "/v2/deployments", {
    name: "restart",
    source: "github",
    source_config: { repo_url: repo.dir, deployment_type: "dev" },
    source_revision_config: { repo_ref: "main" },
  });
  expect(created.status).toBe(201);
  const path = `/v2/deployments/${created.json.id}/revisions/${created.json.latest_revision_id}`;
  await waitFor("the build to start", async () =>
    ["BUILDING", "AWAITING_DEPLOY", "DEPLOYING"].includes((await api("GET", path)).json.status),
  );
  // The whole process group: a machine going down takes the build's child process with it.
  platform = await platform.crashAndRestart({ wholeGroup: true });
  api = platformApi(platform);
  const done = await waitFor(
    "the revision to finish after the restart",
    async () => {
      const r = (await api("GET", path)).json;
      return /DEPLOYED|FAILED|INTERRUPTED/.test(r.status) ? r : undefined;
    },
    90_000,
  );
  expect(done.status, done.error).toBe("DEPLOYED");
  expect((await api("GET", `/agents/${created.json.id}/ok`)).status).toBe(200);
});
