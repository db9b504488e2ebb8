import { request } from "node:http";
import { GetFunctionCommand } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { lambdaControl } from "../shared/aws/clients.ts";
import { deployments, recentDeploymentRecord } from "../shared/records/control.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 26 (1): on the local cloud an agent-server request goes through the AgentRouter bundle, as in AWS: the
// router (under its role) finds the version the deployment's record names and invokes the runtime with
// InvokeWithResponseStream. Only the router reads `active_runtime_version`: without it the deployment answers
// the router's 503, on the platform's origin and on its own, though its revision and its runtime are live.
const repo = gitRepo(graphRepoFiles(["a"]));
let id: string;
let revision: string;
const key = () => ({ tenant: facts.tenant_id, id });
/** The router's copy of a deployment record is a second old at most (shared/recent.ts). */
const pastRecentCopy = () => new Promise((r) => setTimeout(r, 1200));

/** A request at the deployment's own origin (`<id>.localhost`, named by Host). */
function atOwnOrigin(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path,
        headers: { ...auth, host: `${id}.localhost:${url.port}`, "content-type": "application/json" },
      },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

beforeAll(async () => {
  ({ deploymentId: id, revisionId: revision } = await deployRepo(repo.dir, "router", call, auth));
}, 240_000);
afterAll(() => repo.remove());

describe("agent-server requests on the local cloud pass the router bundle", () => {
  it("a deployed revision's record names its runtime version: the function version its deploy published", async () => {
    const version = (await recentDeploymentRecord(facts.tenant_id, id))?.active_runtime_version;
    expect(version).toBe("1");
    const published = await lambdaControl().send(
      new GetFunctionCommand({ FunctionName: `agent-rt-${id}`, Qualifier: version }),
    );
    expect(
      JSON.parse(published.Configuration?.Environment?.Variables?.AGENT_RUNTIME_CONFIG ?? "{}"),
    ).toMatchObject({
      revision_id: revision,
    });
  });

  it("without the runtime version the router answers 503; with it the runtime answers again", async () => {
    const search = () => call("POST", `/agents/${id}/assistants/search`, { headers: auth, body: {} });
    expect((await search()).status).toBe(200);
    expect((await atOwnOrigin("/assistants/search")).status).toBe(200);
    const version = (await recentDeploymentRecord(facts.tenant_id, id))!.active_runtime_version!;
    await deployments.update(key(), { remove: ["active_runtime_version"] });
    try {
      await pastRecentCopy();
      const refused = await search();
      expect(refused.status).toBe(503);
      expect(refused.json.detail).toBe("The deployment has no deployed revision yet");
      const own = await atOwnOrigin("/assistants/search");
      expect(own.status).toBe(503);
    } finally {
      await deployments.update(key(), { set: { active_runtime_version: version } });
    }
    await pastRecentCopy();
    expect((await search()).status).toBe(200);
  });
});
