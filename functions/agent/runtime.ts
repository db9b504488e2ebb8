import { InvokeCommand } from "@aws-sdk/client-lambda";
import { createAgentServer, serveWith } from "../../shared/agent/ops/index.ts";
import { loadCustomAuth, withRequestAuth } from "../../shared/agent/runtime/custom-auth.ts";
import { customRouteAnswer } from "../../shared/agent/runtime/custom-routes.ts";
import { askingDrains } from "../../shared/agent/runtime/drain-asks.ts";
import { drainLine, preludeOf, type RuntimeEvent } from "../../shared/agent/runtime/lambda-protocol.ts";
import { openRuntimeEnv } from "../../shared/agent/runtime/sealed-env.ts";
import { graphNodes, type RuntimeConfig, startRuntime } from "../../shared/agent/runtime/serve.ts";
import { lambda } from "../../shared/aws/clients.ts";
import { config, setEnvironment } from "../../shared/config.ts";
import { HttpError } from "../../shared/errors.ts";
import { json } from "../../shared/http/event.ts";
import { type ResponseStream, writeBody } from "../../shared/http/lambda-front.ts";
import { logger } from "../../shared/log.ts";
import type { IngestResult } from "../../shared/runs/store.ts";
import { loadRuntimeHandler } from "../modules/runtime.ts";
import { routeForKey, servedByRuntime } from "../routes.ts";

// A deployment's runtime in AWS: the code of its own Lambda function (this module is the function's layer; the
// function's zip holds the revision's bundles and a one-line entry re-exporting this handler). The platform's
// router invokes it for each agent-server request after checking the API key, and asynchronously with
// {kind: "drain"} to execute a thread's runs (the Lambda executor: a request's answer asks the router for it,
// runtime/drain-asks.ts; the run sweeper for the rest); the deploy step invokes {kind: "health"} on a new version
// before it goes live. Its role reaches only its deployment's data (runtime/policy.ts), not its own function.
type Streamify = (fn: (event: RuntimeEvent, stream: ResponseStream) => Promise<void>) => unknown;

const settings = JSON.parse(config.agent.runtimeConfig ?? "{}") as Omit<RuntimeConfig, "artifact_dir">;
const token = config.agent.runtimeToken ?? "";
// Its own environment (secrets, langgraph.json env) is opened before any graph is imported: graphs read it there.
const sealedEnv = config.agent.runtimeSecrets;
// Set through the config module, which reads it again (LANGGRAPH_CONFIG is one of the deployment's own).
if (sealedEnv)
  setEnvironment(await openRuntimeEnv(JSON.parse(sealedEnv), settings.tenant_id, settings.deployment_id));

/** Traces go to the platform's AgentTraceIngest function, which files them under this deployment's project. */
async function sendTraces(
  _tenant: string,
  posts: unknown[],
  patches: { id: string; body: unknown }[],
): Promise<IngestResult> {
  const out = await lambda().send(
    new InvokeCommand({
      FunctionName: config.agent.traceFunction,
      Payload: Buffer.from(
        JSON.stringify({
          tenant_id: settings.tenant_id,
          deployment_id: settings.deployment_id,
          revision_id: settings.revision_id,
          token,
          posts,
          patches,
        }),
      ),
    }),
  );
  if (out.FunctionError)
    throw new Error(`trace ingestion failed: ${Buffer.from(out.Payload ?? []).toString()}`);
  return JSON.parse(Buffer.from(out.Payload ?? []).toString()) as IngestResult;
}

const artifactDir = config.lambda.taskRoot ?? process.cwd();
const d = startRuntime({ ...settings, artifact_dir: artifactDir }, { traces: sendTraces });
// The agent server of this runtime: its one deployment, whose runs execute here; every request is served by it.
const agent = createAgentServer({ runtime: d });

export async function answer(e: RuntimeEvent, out: ResponseStream): Promise<void> {
  if (e.kind === "drain") {
    await agent.runs.drain(d, e.thread_id, Date.now() + 14 * 60_000);
    return out.end();
  }
  if (e.kind === "health") {
    await loadCustomAuth(artifactDir);
    const graphs = await graphNodes(d);
    out.write(preludeOf(json(200, graphs)));
    out.write(JSON.stringify(graphs));
    return out.end();
  }
  const route = routeForKey(e.event.routeKey);
  if (!route || !servedByRuntime(route)) {
    out.write(preludeOf(json(404, { detail: "Not Found" })));
    return out.end();
  }
  const handler = await loadRuntimeHandler(route);
  const event = {
    ...e.event,
    requestContext: { ...e.event.requestContext, authorizer: { lambda: { tenant_id: e.tenant_id } } },
  } as typeof e.event;
  const request = {
    method: event.requestContext?.http?.method ?? "GET",
    path: event.rawPath ?? "/",
    query: event.rawQueryString,
    headers: event.headers ?? {},
  };
  // Runs the request stores pending are started by the router, which lines before the prelude ask to.
  await serveWith(agent, () =>
    askingDrains(
      (threadId) => {
        out.write(drainLine(threadId));
        return true;
      },
      (answered) =>
        // Custom auth (langgraph.json auth.path) runs here, in the deployment's own runtime; the answer is written
        // inside the request's identity, so a streamed body is read as that user too.
        withRequestAuth(artifactDir, e.auth ?? "operator", request, async () => {
          // langgraph.json http: the custom routes (http.app) answer first; disabled route groups answer 404.
          const result =
            (await customRouteAnswer(d.runtime!.artifact, event, route)) ?? (await handler(event));
          answered();
          out.write(preludeOf(result));
          await writeBody(result, out);
        }).catch((err: unknown) => {
          if (!(err instanceof HttpError)) throw err;
          answered();
          out.write(preludeOf(json(err.status, err.body())));
          out.write(JSON.stringify(err.body()));
          out.end();
        }),
    ),
  );
}

const streamify = (globalThis as { awslambda?: { streamifyResponse: Streamify } }).awslambda
  ?.streamifyResponse;
export const handler = streamify
  ? streamify((e, stream) =>
      answer(e, stream).catch((err) => {
        logger.error("runtime invocation failed", { error: err });
        throw err;
      }),
    )
  : answer;
