import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ArnFormat, DockerImage, Duration, Stack } from "aws-cdk-lib";
import { BuildSpec, type ComputeType, LinuxArmBuildImage, Project, Source } from "aws-cdk-lib/aws-codebuild";
import { type IGrantable, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Asset } from "aws-cdk-lib/aws-s3-assets";
import { Construct, type Node } from "constructs";
import { buildSync } from "esbuild";
import {
  BUILD_ENVIRONMENT,
  BUILD_NODE_MAJOR,
  BUILD_PROJECT_NAME,
  BUILD_PROJECT_VARIABLES,
  BUILD_QUEUED_TIMEOUT_MINUTES,
  BUILD_SYNC_ACTIONS,
  BUILD_TIMEOUT_MINUTES,
} from "../build/project.ts";
import { BUILD_SCRIPT, BUILD_STEP_ENTRIES, stepBundleOptions } from "../build/step-bundle.ts";
import { acknowledgeActions, acknowledgeResource } from "./nag.ts";
import { ROOT } from "./node-function.ts";

export {
  BUILD_NODE_MAJOR,
  BUILD_PROJECT_NAME,
  BUILD_QUEUED_TIMEOUT_MINUTES,
  BUILD_TIMEOUT_MINUTES,
} from "../build/project.ts";

/**
 * Builds running at once (`-c revisionBuildConcurrency=N`): unset by default, since a new account's concurrent
 * build quota can be 1 or less, below any limit the project could name (CodeBuild refuses a project limit above
 * the account's quota). Beyond either, StartBuild fails with AccountLimitExceededException rather than queueing,
 * and the Build state retries it with jittered backoff, so a push fan-out builds a few at a time.
 */
export const BUILD_CONCURRENCY_CONTEXT = "revisionBuildConcurrency";
/**
 * The builds at once the Build state's retry is sized for: a push fan-out of 49 at 10 at once waits out its turn.
 * Fewer at once (a lower quota or limit) and the last of such a fan-out fail BUILD_FAILED, to be redeployed.
 */
export const FAN_OUT_BUILDS_AT_ONCE = 10;

/** The project's concurrent build limit from the app's context: a whole number ≥ 1, or none. */
export function buildConcurrency(node: Node): number | undefined {
  const v = node.tryGetContext(BUILD_CONCURRENCY_CONTEXT);
  if (v === undefined || v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(
      `${BUILD_CONCURRENCY_CONTEXT} must be a whole number ≥ 1 (unset: no project limit), not "${v}"`,
    );
  return n;
}

/** The project's image (infra/build/project.ts), as CDK names it. */
export const BUILD_IMAGE = LinuxArmBuildImage.fromCodeBuildImageId(BUILD_ENVIRONMENT.image);
/** Step Functions' managed rule behind `codebuild:startBuild.sync`. */
const SYNC_RULE = "StepFunctionsGetEventForCodeBuildStartBuildRule";

/**
 * What the build environment installs, at the versions this repo has: esbuild and TypeScript, which the step
 * calls at run time (kept out of the bundle: their native binaries must match CodeBuild's platform, not the
 * synthesizing machine's), and the graph runtime that a graph folder without package.json is bundled against,
 * as on the local cloud.
 */
export const BUILD_DEPENDENCIES = ["esbuild", "typescript", "@langchain/langgraph", "@langchain/core"];

function installedVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"));
  return pkg.version as string;
}

/** Bundles the build step into `outDir`: its files (infra/build/step-bundle.ts) and a package.json pinning its run-time deps. */
export function bundleBuildStep(outDir: string): void {
  for (const [entry, file] of BUILD_STEP_ENTRIES) buildSync(stepBundleOptions(entry, join(outDir, file)));
  const dependencies = Object.fromEntries(BUILD_DEPENDENCIES.map((name) => [name, installedVersion(name)]));
  writeFileSync(
    join(outDir, "package.json"),
    `${JSON.stringify({ private: true, type: "module", dependencies }, null, 2)}\n`,
  );
}

/**
 * The Build state of infra/state-machines/revision.asl.json: a CodeBuild project whose source is the bundled
 * build step (an S3 asset). The state machine passes the presigned URLs RevisionBuildStart made as overrides;
 * the project's role reaches its asset and its logs, and nothing of the platform's data.
 */
export class RevisionBuild extends Construct {
  readonly project: Project;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const script = new Asset(this, "Script", {
      path: join(ROOT, "infra", "build"),
      bundling: {
        // Required by the type but never run: local bundling either succeeds or throws esbuild's error.
        image: DockerImage.fromRegistry(`public.ecr.aws/docker/library/node:${BUILD_NODE_MAJOR}`),
        local: {
          tryBundle(outDir) {
            bundleBuildStep(outDir);
            return true;
          },
        },
      },
    });
    const logs = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH });
    // CodeBuild encrypts what it keeps of a build with a key of its own, which unseals nothing of the platform.
    const key = new Key(this, "Key", {
      description: "Agent platform revision builds: CodeBuild's own encryption, no platform data",
      enableKeyRotation: true,
    });

    this.project = new Project(this, "Project", {
      projectName: BUILD_PROJECT_NAME,
      description: "Agent platform: builds a deployment revision (fetch, install, bundle graphs, upload)",
      source: Source.s3({ bucket: script.bucket, path: script.s3ObjectKey }),
      buildSpec: BuildSpec.fromObject({
        version: "0.2",
        phases: {
          install: {
            // The Lambda runtime's major (infra/stacks/node-function.ts), as the local build's sandbox runs.
            "runtime-versions": { nodejs: BUILD_NODE_MAJOR },
            // The asset's package.json pins BUILD_DEPENDENCIES; npm fetches esbuild's binary for this platform.
            commands: ["npm install --no-audit --no-fund"],
          },
          build: { commands: [`node --enable-source-maps ${BUILD_SCRIPT}`] },
        },
      }),
      environment: {
        buildImage: BUILD_IMAGE,
        computeType: BUILD_ENVIRONMENT.computeType as ComputeType,
        privileged: BUILD_ENVIRONMENT.privilegedMode,
      },
      // Nothing of the platform's: its job comes as presigned URLs in the state machine's overrides.
      environmentVariables: Object.fromEntries(
        Object.entries(BUILD_PROJECT_VARIABLES).map(([name, value]) => [name, { value }]),
      ),
      timeout: Duration.minutes(BUILD_TIMEOUT_MINUTES),
      queuedTimeout: Duration.minutes(BUILD_QUEUED_TIMEOUT_MINUTES),
      concurrentBuildLimit: buildConcurrency(this.node),
      encryptionKey: key,
      logging: { cloudWatch: { logGroup: logs } },
      grantReportGroupPermissions: false,
    });

    // CodeBuild always grants its default group's streams; builds log to `logs` above, so that grant stays unused.
    const defaultLogs = Stack.of(this).formatArn({
      service: "logs",
      resource: "log-group",
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      resourceName: `/aws/codebuild/${this.project.projectName}`,
    });
    acknowledgeResource(
      this.project,
      `${defaultLogs}:*`,
      "CodeBuild's own grant on the streams of its default log group /aws/codebuild/<project>; no other group.",
    );

    // No grant on a table, the platform key or the artifact bucket: a repository's code that escapes the build's
    // process holds only the presigned URLs of its own revision's objects (shared/build/build-exchange.ts).
    acknowledgeActions(
      this.project,
      ["s3:GetObject*", "s3:GetBucket*", "s3:List*", "kms:ReEncrypt*", "kms:GenerateDataKey*"],
      "Action groups from CDK's grants: read of the build step's own asset object, and the build's own key.",
    );
  }

  /** What `arn:aws:states:::codebuild:startBuild.sync` needs: run and watch builds of this project. */
  grantStartBuildSync(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: BUILD_SYNC_ACTIONS,
        resources: [this.project.projectArn],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["events:PutTargets", "events:PutRule", "events:DescribeRule"],
        resources: [
          Stack.of(this).formatArn({ service: "events", resource: "rule", resourceName: SYNC_RULE }),
        ],
      }),
    );
  }
}
