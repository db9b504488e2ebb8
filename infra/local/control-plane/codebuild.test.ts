import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  BatchGetBuildsCommand,
  type Build,
  CodeBuildClient,
  StartBuildCommand,
  StopBuildCommand,
} from "@aws-sdk/client-codebuild";
import { afterAll, describe, expect, it } from "vitest";
import { BUILD_ENV } from "../../../shared/build/build-exchange.ts";
import { MACHINE as REVISION_MACHINE } from "../../../shared/control/pipeline.ts";
import { outcome, REGION, signedEmulator } from "../../../test/helpers/signed-emulator.ts";
import { BUILD_PROJECT_NAME } from "../../build/project.ts";
import type { RunningBuild } from "../codebuild.ts";
import { machinePrincipals, platformPrincipals } from "../platform-roles.ts";
import type { ProxyPrincipal } from "../policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "../policy-proxy/local-tables.ts";
import { LocalStepFunctions } from "../sfn.ts";
import { CODEBUILD_RESOURCE, startBuildSync } from "../sfn-codebuild.ts";
import { LocalCodeBuild } from "./codebuild.ts";

// CodeBuild through its own API: the revision build project served by the local cloud's emulator behind the policy
// proxy. The real @aws-sdk/client-codebuild, signed as the revision machine's role, gets what its generated policy
// (infra/policies/roles.ts: machineRole) allows and AWS's refusals for the rest; the Step Functions integration
// `codebuild:startBuild.sync` calls the same API and fails the Build state as AWS's does.
const machineRole = machinePrincipals(undefined, REGION).get(REVISION_MACHINE)!;
const taskRole = platformPrincipals(undefined, REGION).get("task")!;
/** A principal allowed every CodeBuild call on everything (to reach the service's own refusals). */
const anyProject: ProxyPrincipal = {
  accessKeyId: "AKIALOCALCODEBUILDANY",
  secretAccessKey: "any-project-secret",
  arn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/any/local`,
  policy: {
    Version: "2012-10-17",
    Statement: [{ Sid: "Any", Effect: "Allow", Action: ["codebuild:*"], Resource: ["*"] }],
  },
};
const principals = [machineRole, taskRole, anyProject];

/** Each build's step: a real child process whose script the test names by the build's TENANT_ID. */
const started: { id: string; env: Record<string, string> }[] = [];
const SCRIPTS: Record<string, string> = {
  ok: "process.exit(0)",
  fails: "process.exit(3)",
  hangs: "setInterval(() => {}, 1000)",
};
function run(id: string, env: Record<string, string>): Promise<RunningBuild> {
  started.push({ id, env });
  const child = spawn(process.execPath, ["-e", SCRIPTS[env.TENANT_ID] ?? SCRIPTS.ok], { stdio: "ignore" });
  const done = new Promise<{ exitCode: number | null; output: string }>((r) =>
    child.on("close", (code) => r({ exitCode: code, output: "" })),
  );
  return Promise.resolve({ done, stop: () => void child.kill("SIGKILL") });
}
const codebuild = new LocalCodeBuild({
  dataDir: "/nonexistent",
  region: REGION,
  account: LOCAL_ACCOUNT,
  accountConcurrentBuilds: 2,
  run,
  // A minute of a build's timeout lasts 200 ms here (the project's 30: 6 s; an override of 5: 1 s).
  minuteMs: 200,
});
const aws = signedEmulator(
  { codebuild },
  { principal: (id) => principals.find((p) => p.accessKeyId === id) },
);
afterAll(() => codebuild.stopAll());

const as = (who: ProxyPrincipal) => new CodeBuildClient(aws.client(who));
const overrides = (tenant: string) => [
  { name: BUILD_ENV.job, value: "http://s3.local/job?X-Amz-Signature=1" },
  { name: BUILD_ENV.tenant, value: tenant },
];
async function ended(client: CodeBuildClient, id: string): Promise<Build> {
  for (;;) {
    const { builds } = await client.send(new BatchGetBuildsCommand({ ids: [id] }));
    if (builds?.[0]?.buildStatus !== "IN_PROGRESS") return builds![0];
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("CodeBuild's API under the revision machine's generated role", () => {
  it("StartBuild runs a build with the project's settings: its timeout, image, compute and variables", async () => {
    const client = as(machineRole);
    const { build } = await client.send(
      new StartBuildCommand({
        projectName: BUILD_PROJECT_NAME,
        environmentVariablesOverride: overrides("ok"),
      }),
    );
    expect(build).toMatchObject({
      projectName: BUILD_PROJECT_NAME,
      buildStatus: "IN_PROGRESS",
      arn: `arn:aws:codebuild:${REGION}:${LOCAL_ACCOUNT}:build/${build!.id}`,
      timeoutInMinutes: 30,
      queuedTimeoutInMinutes: 5,
      environment: {
        type: "ARM_CONTAINER",
        image: "aws/codebuild/amazonlinux-aarch64-standard:3.0",
        computeType: "BUILD_GENERAL1_SMALL",
      },
    });
    expect(build!.id).toMatch(new RegExp(`^${BUILD_PROJECT_NAME}:[0-9a-f-]{36}$`));
    expect(build!.startTime).toBeInstanceOf(Date);
    const env = started.find((s) => s.id === build!.id)!.env;
    // The project's variable, the overrides and CodeBuild's own: nothing of the platform's.
    expect(env).toMatchObject({
      LOG_LEVEL: "info",
      [BUILD_ENV.job]: "http://s3.local/job?X-Amz-Signature=1",
      [BUILD_ENV.tenant]: "ok",
      CODEBUILD_BUILD_ID: build!.id,
    });
    expect(Object.keys(env).filter((k) => /^AWS_|TABLE|KMS/.test(k))).toEqual([]);
    const done = await ended(client, build!.id!);
    expect(done).toMatchObject({ buildStatus: "SUCCEEDED", buildComplete: true, currentPhase: "COMPLETED" });
    expect(done.endTime).toBeInstanceOf(Date);
  });

  it("a build step that exits non-zero ends FAILED; one past the project's timeout ends TIMED_OUT", async () => {
    const client = as(machineRole);
    const failing = await client.send(
      new StartBuildCommand({
        projectName: BUILD_PROJECT_NAME,
        environmentVariablesOverride: overrides("fails"),
      }),
    );
    expect((await ended(client, failing.build!.id!)).buildStatus).toBe("FAILED");
    const hanging = await client.send(
      new StartBuildCommand({
        projectName: BUILD_PROJECT_NAME,
        environmentVariablesOverride: overrides("hangs"),
        timeoutInMinutesOverride: 5,
      }),
    );
    expect(hanging.build!.timeoutInMinutes).toBe(5);
    expect((await ended(client, hanging.build!.id!)).buildStatus).toBe("TIMED_OUT");
  });

  it("StopBuild stops a build (STOPPED); BatchGetBuilds names the ids it does not know", async () => {
    const client = as(machineRole);
    const { build } = await client.send(
      new StartBuildCommand({
        projectName: BUILD_PROJECT_NAME,
        environmentVariablesOverride: overrides("hangs"),
      }),
    );
    const stopped = await client.send(new StopBuildCommand({ id: build!.id }));
    expect(stopped.build?.buildStatus).toBe("STOPPED");
    const missing = `${BUILD_PROJECT_NAME}:00000000-0000-0000-0000-000000000000`;
    const got = await client.send(new BatchGetBuildsCommand({ ids: [build!.id!, missing] }));
    expect(got.builds?.map((b) => b.buildStatus)).toEqual(["STOPPED"]);
    expect(got.buildsNotFound).toEqual([missing]);
  });

  it("past the account's concurrent builds, StartBuild fails with AccountLimitExceededException", async () => {
    const client = as(machineRole);
    const start = () =>
      client.send(
        new StartBuildCommand({
          projectName: BUILD_PROJECT_NAME,
          environmentVariablesOverride: overrides("hangs"),
        }),
      );
    const a = await start();
    const b = await start();
    expect(await outcome(start())).toMatchObject({ name: "AccountLimitExceededException", status: 400 });
    for (const x of [a, b]) await client.send(new StopBuildCommand({ id: x.build!.id }));
    expect(await outcome(start().then((c) => client.send(new StopBuildCommand({ id: c.build!.id }))))).toBe(
      "allowed",
    );
  });

  it("another project, or a role without the grant, is AccessDeniedException as IAM words it; nothing runs", async () => {
    const before = started.length;
    expect(
      await outcome(as(machineRole).send(new StartBuildCommand({ projectName: "someone-elses-project" }))),
    ).toEqual({
      name: "AccessDeniedException",
      status: 400,
      message: `User: ${machineRole.arn} is not authorized to perform: codebuild:StartBuild on resource: arn:aws:codebuild:${REGION}:${LOCAL_ACCOUNT}:project/someone-elses-project because no identity-based policy allows the codebuild:StartBuild action`,
    });
    expect(
      await outcome(as(taskRole).send(new StartBuildCommand({ projectName: BUILD_PROJECT_NAME }))),
    ).toMatchObject({ name: "AccessDeniedException", status: 400 });
    expect(
      await outcome(as(taskRole).send(new BatchGetBuildsCommand({ ids: [`${BUILD_PROJECT_NAME}:x`] }))),
    ).toMatchObject({ name: "AccessDeniedException", status: 400 });
    expect(started.length).toBe(before);
  });

  it("a project the account does not have is ResourceNotFoundException; a call it does not take, InvalidInputException", async () => {
    expect(await outcome(as(anyProject).send(new StartBuildCommand({ projectName: "nope" })))).toMatchObject({
      name: "ResourceNotFoundException",
      status: 400,
    });
    expect(
      await outcome(
        as(anyProject).send(
          new StartBuildCommand({ projectName: BUILD_PROJECT_NAME, sourceVersion: "refs/heads/main" }),
        ),
      ),
    ).toMatchObject({ name: "InvalidInputException", status: 400 });
  });

  // Issue 33: an override the build exchange does not set (NODE_OPTIONS=--import=data:…, PATH, a secret reference)
  // would run the caller's code in the build step: refused before anything runs.
  it.each([
    ["NODE_OPTIONS", [{ name: "NODE_OPTIONS", value: "--import=data:text/javascript,1" }]],
    ["PATH", [{ name: "PATH", value: "/tmp/evil" }]],
    ["a secret reference", [{ ...overrides("ok")[0], type: "SECRETS_MANAGER" as const }]],
  ])(
    "an override of %s is InvalidInputException, and nothing runs",
    async (_what, environmentVariablesOverride) => {
      const before = started.length;
      expect(
        await outcome(
          as(machineRole).send(
            new StartBuildCommand({ projectName: BUILD_PROJECT_NAME, environmentVariablesOverride }),
          ),
        ),
      ).toMatchObject({
        name: "InvalidInputException",
        status: 400,
        message: expect.stringMatching(/StartBuild refused/),
      });
      expect(started.length).toBe(before);
    },
  );
});

/** The revision machine's Build state (infra/state-machines/revision.asl.json), with its Retry and Catch. */
function buildStateMachine(): Parameters<LocalStepFunctions["register"]>[1] {
  const asl = JSON.parse(
    readFileSync(join(import.meta.dirname, "..", "..", "state-machines", "revision.asl.json"), "utf8"),
  );
  const build = { ...asl.States.Build, Next: "Built" };
  build.Parameters = { ...build.Parameters, ProjectName: BUILD_PROJECT_NAME };
  build.Catch = [{ ...build.Catch[0], Next: "Failed" }];
  expect(build.Resource).toBe(`${CODEBUILD_RESOURCE}.sync`);
  return {
    StartAt: "Build",
    States: {
      Build: build,
      Built: { Type: "Succeed" },
      // What the revision machine's Failed task (RevisionFailed) is handed: the Catch's $.failure.
      Failed: { Type: "Pass", OutputPath: "$.failure", End: true },
    },
  } as Parameters<LocalStepFunctions["register"]>[1];
}

async function execute(who: ProxyPrincipal, tenant: string) {
  const sfn = new LocalStepFunctions(
    "/nonexistent",
    (resource) => (resource.startsWith(CODEBUILD_RESOURCE) ? startBuildSync(() => as(who), 20) : undefined),
    { retryIntervalMs: 10 },
  );
  const arn = sfn.register("revision-build-only", buildStateMachine());
  const { executionArn } = sfn.startExecution({
    stateMachineArn: arn,
    input: JSON.stringify({
      build: { env: overrides(tenant).map((v) => ({ Name: v.name, Value: v.value })) },
    }),
  });
  await sfn.settled(executionArn);
  const d = sfn.describeExecution({ executionArn });
  return { status: d.status, ...(JSON.parse(d.output ?? "{}") as { Error?: string; Cause?: string }) };
}

describe("Step Functions' codebuild:startBuild.sync, locally: StartBuild, then BatchGetBuilds until the build ends", () => {
  it("a build that succeeds passes the Build state", async () => {
    const out = await execute(machineRole, "ok");
    expect(out.status).toBe("SUCCEEDED");
    expect(out.Error).toBeUndefined();
  });

  it("a failed build fails the state with States.TaskFailed and the build as its cause", async () => {
    const out = await execute(machineRole, "fails");
    expect(out).toMatchObject({ status: "SUCCEEDED", Error: "States.TaskFailed" });
    expect(JSON.parse(out.Cause!)).toMatchObject({
      Build: { BuildStatus: "FAILED", ProjectName: BUILD_PROJECT_NAME },
    });
  });

  it("a StartBuild the machine's role may not make fails the revision as AWS does: CodeBuild.AWSCodeBuildException", async () => {
    const before = started.length;
    const out = await execute(taskRole, "ok");
    expect(out).toMatchObject({ status: "SUCCEEDED", Error: "CodeBuild.AWSCodeBuildException" });
    expect(out.Cause).toBe(
      `User: ${taskRole.arn} is not authorized to perform: codebuild:StartBuild on resource: arn:aws:codebuild:${REGION}:${LOCAL_ACCOUNT}:project/${BUILD_PROJECT_NAME} because no identity-based policy allows the codebuild:StartBuild action (Service: AWSCodeBuild; Status Code: 400; Error Code: AccessDeniedException; Request ID: ${out.Cause!.match(/Request ID: ([^;]+);/)![1]}; Proxy: null)`,
    );
    expect(started.length).toBe(before);
  });
});
