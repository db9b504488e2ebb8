import {
  BatchGetBuildsCommand,
  type Build,
  type CodeBuildClient,
  StartBuildCommand,
  type StartBuildCommandInput,
} from "@aws-sdk/client-codebuild";

// The local Step Functions' `arn:aws:states:::codebuild:startBuild.sync` integration, as AWS's runs it: StartBuild
// with the state's parameters (Step Functions' PascalCase members as the API's), then BatchGetBuilds until the build
// is no longer IN_PROGRESS — through the policy proxy, signed as the state machine's role. The state's result is
// `{ Build }` as BatchGetBuilds answered it; a build that did not succeed fails the state with States.TaskFailed and
// that result as its cause; a refused call fails it with CodeBuild.<exception> (a modeled one) or
// CodeBuild.AWSCodeBuildException, the message saying the service's error code, as Step Functions reports them.

export const CODEBUILD_RESOURCE = "arn:aws:states:::codebuild:startBuild";

/** The exceptions CodeBuild's API models; Step Functions names any other error CodeBuild.AWSCodeBuildException. */
const MODELED = new Set([
  "AccountLimitExceededException",
  "AccountSuspendedException",
  "InvalidInputException",
  "OAuthProviderException",
  "ResourceAlreadyExistsException",
  "ResourceNotFoundException",
]);

const lowerFirst = (k: string) => k.charAt(0).toLowerCase() + k.slice(1);
const upperFirst = (k: string) => k.charAt(0).toUpperCase() + k.slice(1);

/** A value's object keys renamed at every depth (a Date stays a Date, as an ISO string in JSON). */
function rekey(v: unknown, name: (k: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => rekey(x, name));
  if (v === null || typeof v !== "object" || v instanceof Date) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [name(k), rekey(x, name)]));
}

/** A failed CodeBuild call as the Task state's error. */
function integrationError(err: unknown): Error {
  const e = err as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number; requestId?: string };
  };
  const code = e?.name ?? "Error";
  const name = MODELED.has(code) ? `CodeBuild.${code}` : "CodeBuild.AWSCodeBuildException";
  const message = `${e?.message ?? String(err)} (Service: AWSCodeBuild; Status Code: ${e?.$metadata?.httpStatusCode ?? 400}; Error Code: ${code}; Request ID: ${e?.$metadata?.requestId ?? "null"}; Proxy: null)`;
  return Object.assign(new Error(message), { name });
}

export function startBuildSync(client: () => CodeBuildClient, pollMs: number) {
  return async (parameters: unknown): Promise<{ Build: unknown }> => {
    const input = rekey(parameters ?? {}, lowerFirst) as StartBuildCommandInput;
    let build: Build | undefined;
    try {
      build = (await client().send(new StartBuildCommand(input))).build;
      while (build?.buildStatus === "IN_PROGRESS" && build.id) {
        await new Promise((r) => setTimeout(r, pollMs));
        const out = await client().send(new BatchGetBuildsCommand({ ids: [build.id] }));
        build = out.builds?.[0];
      }
    } catch (err) {
      throw integrationError(err);
    }
    const result = { Build: rekey(build ?? null, upperFirst) };
    if (build?.buildStatus === "SUCCEEDED") return result;
    throw Object.assign(new Error(JSON.stringify(result)), { name: "States.TaskFailed" });
  };
}
