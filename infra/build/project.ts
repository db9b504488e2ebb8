// The revision build's CodeBuild project as data: the CDK app creates it from these settings
// (infra/stacks/revision-build.ts) and the local CodeBuild serves the same project (infra/local/control-plane/codebuild.ts),
// so a build runs with one project's timeout, environment and variables wherever it runs.

export const BUILD_PROJECT_NAME = "agent-platform-revision-build";
/** A build's own time limit. */
export const BUILD_TIMEOUT_MINUTES = 30;
/**
 * How long a build may wait in CodeBuild's queue (the least CodeBuild allows: 5 to 480 minutes,
 * https://docs.aws.amazon.com/codebuild/latest/userguide/builds-working.html); the revision machine's Build state
 * allows the queue and the build together (revision.asl.json).
 */
export const BUILD_QUEUED_TIMEOUT_MINUTES = 5;
/** The Node.js major the build installs: the platform's Lambda runtime major (nodejs22.x). */
export const BUILD_NODE_MAJOR = 22;

/**
 * Builds run on the runtimes' architecture (arm64, infra/stacks/node-function.ts), so native dependencies a graph
 * installs are the ones its Lambda function loads: Amazon Linux 2023 aarch64, with the Lambda runtime's Node.
 */
export const BUILD_ENVIRONMENT = {
  type: "ARM_CONTAINER",
  image: "aws/codebuild/amazonlinux-aarch64-standard:3.0",
  /** 3 GB of memory, 2 vCPUs. */
  computeType: "BUILD_GENERAL1_SMALL",
  privilegedMode: false,
} as const;

/** The project's own variables (nothing of the platform's: its job comes as presigned URLs in the overrides). */
export const BUILD_PROJECT_VARIABLES: Readonly<Record<string, string>> = { LOG_LEVEL: "info" };

/** Step Functions' `codebuild:startBuild.sync` integration: what the machine's role may call on the project. */
export const BUILD_SYNC_ACTIONS = ["codebuild:StartBuild", "codebuild:StopBuild", "codebuild:BatchGetBuilds"];

/** The project's ARN. */
export const buildProjectArn = (partition: string, region: string, account: string) =>
  `arn:${partition}:codebuild:${region}:${account}:project/${BUILD_PROJECT_NAME}`;
