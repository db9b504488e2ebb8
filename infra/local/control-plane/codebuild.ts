import { createHash, randomUUID } from "node:crypto";
import {
  BUILD_ENVIRONMENT,
  BUILD_PROJECT_NAME,
  BUILD_PROJECT_VARIABLES,
  BUILD_QUEUED_TIMEOUT_MINUTES,
  BUILD_TIMEOUT_MINUTES,
} from "../../build/project.ts";
import { type BuildVariable, checkBuildOverrides, localBuildEnv, type RunningBuild } from "../codebuild.ts";
import { awsError } from "../sfn.ts";

// The local CodeBuild: the revision build project (infra/build/project.ts, the settings the CDK app gives it) served
// over CodeBuild's JSON protocol (X-Amz-Target CodeBuild_20161006.<Operation>) — StartBuild, BatchGetBuilds and
// StopBuild, what Step Functions' `codebuild:startBuild.sync` integration calls. A build runs the build step with the
// project's variables and the call's overrides, ends FAILED on a non-zero exit, TIMED_OUT past the project's timeout
// (or the call's override) and STOPPED on StopBuild. Builds live as long as this process: the Step Functions
// executions that wait on them do too, and are re-driven at start (a build asked for again).

type BuildStatus = "IN_PROGRESS" | "SUCCEEDED" | "FAILED" | "FAULT" | "TIMED_OUT" | "STOPPED";

export interface Build {
  id: string;
  arn: string;
  buildNumber: number;
  startTime: Date;
  endTime?: Date;
  currentPhase: string;
  buildStatus: BuildStatus;
  projectName: string;
  buildComplete: boolean;
  initiator: string;
  timeoutInMinutes: number;
  queuedTimeoutInMinutes: number;
  environment: {
    type: string;
    image: string;
    computeType: string;
    privilegedMode: boolean;
    environmentVariables: { name: string; value: string; type: string }[];
  };
  logs: Record<string, never>;
}

/** A project the local account has: the revision build's, with its settings. */
interface Project {
  name: string;
  timeoutInMinutes: number;
  queuedTimeoutInMinutes: number;
  /** Builds of the project at once (CodeBuild's concurrentBuildLimit); none by default, as the CDK app sets none. */
  concurrentBuildLimit?: number;
}

/** The StartBuild members the local CodeBuild does what CodeBuild does with; it refuses the others. */
const START_MEMBERS = new Set([
  "projectName",
  "environmentVariablesOverride",
  "timeoutInMinutesOverride",
  "idempotencyToken",
]);
/** How long CodeBuild honours an idempotency token. */
const IDEMPOTENCY_MS = 5 * 60_000;
/** How long a finished build is kept (its overrides hold presigned URLs: not for longer than a caller polls). */
const KEEP_FINISHED_MS = 60 * 60_000;

const invalid = (message: string) => awsError("InvalidInputException", message, 400);

export class LocalCodeBuild {
  private readonly projects = new Map<string, Project>();
  private readonly builds = new Map<string, { build: Build; running?: RunningBuild }>();
  private readonly tokens = new Map<string, { id: string; request: string; at: number }>();
  private numbers = 0;

  constructor(
    private readonly opts: {
      dataDir: string;
      region: string;
      account: string;
      /** The account's concurrent builds quota (AWS: by compute type, 1 or less on a new account). */
      accountConcurrentBuilds: number;
      /** Runs a build's step (infra/local/codebuild.ts: runBuildStep). */
      run(id: string, env: Record<string, string>): Promise<RunningBuild>;
      /** A project limit (tests); the CDK app's default is none. */
      concurrentBuildLimit?: number;
      /** How long a minute of a build's timeout lasts (tests shrink it). */
      minuteMs?: number;
    },
  ) {
    this.projects.set(BUILD_PROJECT_NAME, {
      name: BUILD_PROJECT_NAME,
      timeoutInMinutes: BUILD_TIMEOUT_MINUTES,
      queuedTimeoutInMinutes: BUILD_QUEUED_TIMEOUT_MINUTES,
      ...(opts.concurrentBuildLimit ? { concurrentBuildLimit: opts.concurrentBuildLimit } : {}),
    });
  }

  handle(operation: string, input: Record<string, unknown>): Promise<unknown> | unknown {
    switch (operation) {
      case "StartBuild":
        return this.start(input);
      case "BatchGetBuilds":
        return this.batchGet(input);
      case "StopBuild":
        return this.stop(input);
      default:
        throw awsError("UnknownOperationException", `CodeBuild_20161006.${operation} is not emulated`, 400);
    }
  }

  private running(project?: string): number {
    return [...this.builds.values()].filter(
      (b) => b.build.buildStatus === "IN_PROGRESS" && (!project || b.build.projectName === project),
    ).length;
  }

  private prune(now = Date.now()): void {
    for (const [id, b] of this.builds)
      if (b.build.endTime && now - b.build.endTime.getTime() > KEEP_FINISHED_MS) this.builds.delete(id);
    for (const [token, t] of this.tokens) if (now - t.at > IDEMPOTENCY_MS) this.tokens.delete(token);
  }

  private async start(input: Record<string, unknown>): Promise<{ build: Build }> {
    this.prune();
    const unknown = Object.keys(input).filter((k) => !START_MEMBERS.has(k));
    if (unknown.length) throw invalid(`The local CodeBuild does not take ${unknown.join(", ")}`);
    const name = input.projectName;
    if (typeof name !== "string" || !name) throw invalid("projectName is required");
    const project = this.projects.get(name);
    if (!project) throw awsError("ResourceNotFoundException", `Project cannot be found: ${name}`, 400);
    const overrides = checkBuildOverrides(input.environmentVariablesOverride);
    const timeout = input.timeoutInMinutesOverride ?? project.timeoutInMinutes;
    if (!Number.isInteger(timeout) || (timeout as number) < 5 || (timeout as number) > 2160)
      throw invalid("timeoutInMinutesOverride must be a whole number of minutes from 5 to 2160");
    const token = input.idempotencyToken;
    const request = createHash("sha256").update(JSON.stringify(input)).digest("hex");
    if (token !== undefined) {
      if (typeof token !== "string" || !token) throw invalid("idempotencyToken must be a string");
      const seen = this.tokens.get(token);
      const earlier = seen && this.builds.get(seen.id);
      if (seen && earlier) {
        if (seen.request !== request)
          throw invalid("idempotencyToken was used by a StartBuild with other parameters");
        return { build: earlier.build };
      }
    }
    // Past the account's quota or the project's limit CodeBuild refuses the build (the Build state retries it).
    if (this.running() >= this.opts.accountConcurrentBuilds)
      throw awsError(
        "AccountLimitExceededException",
        `Cannot have more than ${this.opts.accountConcurrentBuilds} builds in queue for the account`,
        400,
      );
    if (project.concurrentBuildLimit !== undefined && this.running(name) >= project.concurrentBuildLimit)
      throw awsError(
        "AccountLimitExceededException",
        `Project ${name} cannot have more than ${project.concurrentBuildLimit} concurrent builds`,
        400,
      );
    const id = `${name}:${randomUUID()}`;
    const arn = `arn:aws:codebuild:${this.opts.region}:${this.opts.account}:build/${id}`;
    const variables: BuildVariable[] = [
      ...Object.entries(BUILD_PROJECT_VARIABLES).map(([n, value]) => ({ name: n, value, type: "PLAINTEXT" })),
      ...overrides.map((v) => ({ ...v, type: "PLAINTEXT" })),
    ];
    const build: Build = {
      id,
      arn,
      buildNumber: ++this.numbers,
      startTime: new Date(),
      currentPhase: "BUILD",
      buildStatus: "IN_PROGRESS",
      projectName: name,
      buildComplete: false,
      initiator: "local",
      timeoutInMinutes: timeout as number,
      queuedTimeoutInMinutes: project.queuedTimeoutInMinutes,
      environment: {
        ...BUILD_ENVIRONMENT,
        environmentVariables: variables.map((v) => ({ name: v.name, value: v.value, type: "PLAINTEXT" })),
      },
      logs: {},
    };
    const entry: { build: Build; running?: RunningBuild } = { build };
    this.builds.set(id, entry);
    if (typeof token === "string") this.tokens.set(token, { id, request, at: Date.now() });
    const env = localBuildEnv(
      {
        codebuild: {
          CODEBUILD_BUILD_ID: id,
          CODEBUILD_BUILD_ARN: arn,
          CODEBUILD_BUILD_NUMBER: String(build.buildNumber),
          CODEBUILD_INITIATOR: build.initiator,
        },
        project: BUILD_PROJECT_VARIABLES,
        overrides,
      },
      this.opts.dataDir,
    );
    try {
      entry.running = await this.opts.run(id, env);
    } catch (err) {
      this.end(build, "FAULT");
      throw err;
    }
    const timer = setTimeout(
      () => {
        if (build.buildStatus !== "IN_PROGRESS") return;
        this.end(build, "TIMED_OUT");
        entry.running?.stop();
      },
      build.timeoutInMinutes * (this.opts.minuteMs ?? 60_000),
    );
    timer.unref();
    void entry.running.done.then(({ exitCode }) => {
      clearTimeout(timer);
      if (build.buildStatus === "IN_PROGRESS") this.end(build, exitCode === 0 ? "SUCCEEDED" : "FAILED");
    });
    return { build };
  }

  private end(build: Build, status: BuildStatus): void {
    Object.assign(build, {
      buildStatus: status,
      currentPhase: "COMPLETED",
      buildComplete: true,
      endTime: new Date(),
    });
  }

  private ids(input: Record<string, unknown>): string[] {
    const ids = input.ids;
    if (!Array.isArray(ids) || ids.length < 1 || ids.length > 100 || ids.some((i) => typeof i !== "string"))
      throw invalid("ids must be a list of 1 to 100 build ids");
    return ids as string[];
  }

  private batchGet(input: Record<string, unknown>): { builds: Build[]; buildsNotFound: string[] } {
    const builds: Build[] = [];
    const buildsNotFound: string[] = [];
    for (const id of this.ids(input)) {
      const found = this.builds.get(id.startsWith("arn:") ? id.slice(id.indexOf(":build/") + 7) : id);
      if (found) builds.push(found.build);
      else buildsNotFound.push(id);
    }
    return { builds, buildsNotFound };
  }

  private stop(input: Record<string, unknown>): { build: Build } {
    const id = input.id;
    if (typeof id !== "string" || !id) throw invalid("id is required");
    const found = this.builds.get(id.startsWith("arn:") ? id.slice(id.indexOf(":build/") + 7) : id);
    if (!found) throw awsError("ResourceNotFoundException", `Build cannot be found: ${id}`, 400);
    if (found.build.buildStatus === "IN_PROGRESS") {
      this.end(found.build, "STOPPED");
      found.running?.stop();
    }
    return { build: found.build };
  }

  /** Stops every build (the local cloud is stopping). */
  stopAll(): void {
    for (const b of this.builds.values())
      if (b.build.buildStatus === "IN_PROGRESS") {
        this.end(b.build, "STOPPED");
        b.running?.stop();
      }
  }
}
