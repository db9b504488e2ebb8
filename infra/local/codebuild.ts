import { spawn } from "node:child_process";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { config } from "../../shared/config.ts";
import { toolEnv } from "../../shared/deploy/exec.ts";
import { logger } from "../../shared/log.ts";

// The local CodeBuild: a `codebuild:startBuild.sync` Task state runs the build step (infra/build/) in a child
// process with the state's environment overrides, as the CodeBuild project runs it in AWS. A non-zero exit
// fails the state as a failed build does.
export const CODEBUILD_RESOURCE = "arn:aws:states:::codebuild:startBuild";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCRIPT = join(ROOT, "infra", "build", "revision-build.ts");

interface StartBuild {
  ProjectName?: string;
  EnvironmentVariablesOverride?: { Name: string; Value: string }[];
}

/**
 * The build step's environment, built from nothing as CodeBuild's is: the state's overrides (presigned URLs),
 * the tools' basics and the operator's settings the local build reads (where local repositories may be, the
 * dependency cache, egress exceptions). No table, key, endpoint or credential of the platform.
 */
export function localBuildEnv(input: StartBuild, dataDir: string): Record<string, string> {
  const env: Record<string, string> = {
    ...toolEnv({}),
    PLATFORM_LOCAL: "1",
    DATA_DIR: config.dataDir,
    LOCAL_REPO_ROOTS: config.localRepoRoots.join(delimiter),
    BUILD_CACHE_DIR: config.buildCacheDir ?? join(dataDir, "build-cache"),
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    ...(process.env.EGRESS_ALLOW ? { EGRESS_ALLOW: process.env.EGRESS_ALLOW } : {}),
    ...(process.env.npm_config_registry ? { npm_config_registry: process.env.npm_config_registry } : {}),
  };
  for (const v of input.EnvironmentVariablesOverride ?? []) env[v.Name] = v.Value;
  return env;
}

export function localCodeBuild(dataDir: string) {
  return (input: StartBuild): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = `local-build:${crypto.randomUUID()}`;
      const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
        cwd: ROOT,
        env: localBuildEnv(input, dataDir),
        stdio: "pipe",
      });
      let tail = "";
      const keep = (chunk: Buffer) => {
        tail = (tail + chunk.toString("utf8")).slice(-4000);
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
      child.on("error", reject);
      child.on("close", (code) => {
        if (code === 0) {
          resolve({ Build: { Id: id, ProjectName: input.ProjectName, BuildStatus: "SUCCEEDED" } });
          return;
        }
        logger.warn("local build failed", { build_id: id, exit_code: code, output: tail.slice(-1000) });
        reject(
          Object.assign(new Error(JSON.stringify({ Id: id, BuildStatus: "FAILED", ExitCode: code })), {
            name: "States.TaskFailed",
          }),
        );
      });
    });
}
