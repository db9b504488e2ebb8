import { BUILD_ENV, type BuildUrls } from "../../shared/build/build-exchange.ts";
import { runBuildStep } from "../../shared/build/build-step.ts";
import { loadConfig } from "../../shared/config.ts";

// The revision build step: what the CodeBuild project runs in AWS and the local cloud runs in a child process.
// Its presigned URLs come from the environment (the state machine's EnvironmentVariablesOverride, made by the
// RevisionBuildStart task); it exits non-zero only when it could not report its result.
const build = loadConfig().build;
const urls = Object.fromEntries(
  Object.entries(build.urls).map(([key, url]) => [key, url ?? ""]),
) as BuildUrls;
const tenant = build.tenant ?? "";
if (!tenant || Object.values(urls).some((u) => !u)) {
  console.error(`${Object.values(BUILD_ENV).join(", ")} must be set`);
  process.exit(2);
}
runBuildStep(urls, tenant).then(
  (r) => {
    console.log(r.ok ? "build succeeded" : `build failed: ${r.error}`);
    process.exit(0);
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
