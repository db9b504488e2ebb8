import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
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

export function localCodeBuild(dataDir: string) {
  return (input: StartBuild): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const env: Record<string, string | undefined> = {
        ...process.env,
        BUILD_CACHE_DIR: process.env.BUILD_CACHE_DIR ?? join(dataDir, "build-cache"),
        LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
      };
      for (const v of input.EnvironmentVariablesOverride ?? []) env[v.Name] = v.Value;
      const id = `local-build:${crypto.randomUUID()}`;
      const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], { cwd: ROOT, env, stdio: "pipe" });
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
