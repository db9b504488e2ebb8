import { runBuild } from "../../shared/control/pipeline.ts";

// The revision build step: what the CodeBuild project runs in AWS and the local cloud runs in a child
// process. Which revision comes from the environment (the state machine's EnvironmentVariablesOverride).
const input = {
  tenant_id: process.env.TENANT_ID ?? "",
  deployment_id: process.env.DEPLOYMENT_ID ?? "",
  revision_id: process.env.REVISION_ID ?? "",
};
if (!input.tenant_id || !input.deployment_id || !input.revision_id) {
  console.error("TENANT_ID, DEPLOYMENT_ID and REVISION_ID must be set");
  process.exit(2);
}
runBuild(input).then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
