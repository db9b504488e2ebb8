import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ArnFormat, DockerImage, Duration, Stack } from "aws-cdk-lib";
import { BuildSpec, ComputeType, LinuxBuildImage, Project, Source } from "aws-cdk-lib/aws-codebuild";
import { type IGrantable, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Asset } from "aws-cdk-lib/aws-s3-assets";
import { Construct } from "constructs";
import { buildSync } from "esbuild";
import { BUILD_SCRIPT, BUILD_STEP_ENTRIES, stepBundleOptions } from "../build/step-bundle.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledgeActions, acknowledgeResource } from "./nag.ts";
import { ROOT } from "./node-function.ts";

export const BUILD_PROJECT_NAME = "agent-platform-revision-build";
/** Step Functions' managed rule behind `codebuild:startBuild.sync`. */
const SYNC_RULE = "StepFunctionsGetEventForCodeBuildStartBuildRule";

/**
 * What the build environment installs, at the versions this repo has: esbuild, which the step calls at run time
 * (kept out of the bundle: its native binary must match CodeBuild's platform, not the synthesizing machine's),
 * and the graph runtime that a graph folder without package.json is bundled against, as on the local cloud.
 */
export const BUILD_DEPENDENCIES = ["esbuild", "@langchain/langgraph", "@langchain/core"];

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

export interface RevisionBuildProps {
  data: DataStack;
}

/**
 * The Build state of infra/state-machines/revision.asl.json: a CodeBuild project whose source is the bundled
 * build step (an S3 asset). The state machine passes TENANT_ID, DEPLOYMENT_ID and REVISION_ID as overrides.
 */
export class RevisionBuild extends Construct {
  readonly project: Project;

  constructor(scope: Construct, id: string, props: RevisionBuildProps) {
    super(scope, id);
    const script = new Asset(this, "Script", {
      path: join(ROOT, "infra", "build"),
      bundling: {
        // Required by the type but never run: local bundling either succeeds or throws esbuild's error.
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:20"),
        local: {
          tryBundle(outDir) {
            bundleBuildStep(outDir);
            return true;
          },
        },
      },
    });
    const refs = props.data.importInto(scope);
    const logs = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH });
    const environment: Record<string, string> = {
      ...props.data.functionEnvironment(scope),
      LOG_LEVEL: "info",
    };

    this.project = new Project(this, "Project", {
      projectName: BUILD_PROJECT_NAME,
      description: "Agent platform: builds a deployment revision (fetch, install, bundle graphs, upload)",
      source: Source.s3({ bucket: script.bucket, path: script.s3ObjectKey }),
      buildSpec: BuildSpec.fromObject({
        version: "0.2",
        phases: {
          install: {
            "runtime-versions": { nodejs: 20 },
            // The asset's package.json pins BUILD_DEPENDENCIES; npm fetches esbuild's binary for this platform.
            commands: ["npm install --no-audit --no-fund"],
          },
          build: { commands: [`node --enable-source-maps ${BUILD_SCRIPT}`] },
        },
      }),
      environment: {
        buildImage: LinuxBuildImage.STANDARD_7_0,
        computeType: ComputeType.SMALL,
        privileged: false,
      },
      environmentVariables: Object.fromEntries(
        Object.entries(environment).map(([name, value]) => [name, { value }]),
      ),
      timeout: Duration.minutes(30),
      // Build artifacts, logs and cache are encrypted with the platform key (which also unseals tokens).
      encryptionKey: refs.key,
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

    // The step reads and writes revisions, deployments and integrations in `main`, and nothing else.
    refs.tables.main.grantReadWriteData(this.project);
    acknowledgeResource(
      this.project,
      `${refs.tables.main.tableArn}/index/*`,
      "Queries on the main table's own GSIs need <table>/index/*; no other table is reachable.",
    );
    props.data.grantArtifacts(scope, this.project, { read: true, write: ["artifacts/", "logs/"] });
    acknowledgeActions(
      this.project,
      ["s3:GetObject*", "s3:GetBucket*", "s3:List*", "kms:ReEncrypt*", "kms:GenerateDataKey*"],
      "Action groups from CDK's grants: read of the build step's own asset object, encrypt/decrypt with the platform key.",
    );
  }

  /** What `arn:aws:states:::codebuild:startBuild.sync` needs: run and watch builds of this project. */
  grantStartBuildSync(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["codebuild:StartBuild", "codebuild:StopBuild", "codebuild:BatchGetBuilds"],
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
