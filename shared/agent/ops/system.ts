import { createRequire } from "node:module";
import { authenticate } from "../../auth/api-keys.ts";
import { config } from "../../config.ts";
import { NotFound, ServiceUnavailable } from "../../errors.ts";
import type { HttpEvent } from "../../http/event.ts";
import { deployments } from "../../records/control.ts";
import { artifactManifest } from "../artifact/artifact.ts";
import { agentMetrics, prometheusText } from "../runs/metrics.ts";
import { HTML_SANDBOX } from "../runtime/answer-headers.ts";
import { agentServerBase, uiAsset, uiComponentHtml } from "../ui/ui.ts";
import type { Caller, OpsContext } from "./caller.ts";
import { docsPage } from "./openapi.ts";

// What the agent server answers about itself: info, metrics, health, docs and UI files. None of them is a
// resource of a user's (the reference asks no Auth handler for them): each is answered to any caller the
// router admitted for the deployment (the public ones — health, docs, UI files — to anyone).

const langgraphVersion = (): string | undefined => {
  try {
    return (createRequire(import.meta.url)("@langchain/langgraph/package.json") as { version: string })
      .version;
  } catch {
    return undefined;
  }
};

/** Server info as the LangGraph API server's /info: what this agent server supports. */
export async function info(s: OpsContext, caller: Caller, deploymentId: string) {
  const d = await s.deployment(caller, deploymentId);
  // A route group langgraph.json's http.disable_* removed is not served (crons go with the runs).
  const off = (await artifactManifest(d.runtime?.artifact).catch(() => undefined))?.http ?? {};
  return {
    version: config.version,
    langgraph_js_version: langgraphVersion(),
    flags: {
      assistants: !off.disable_assistants,
      crons: !off.disable_runs,
      langsmith: d.tracing_project_id !== null,
      langsmith_tracing_replicas: false,
    },
  };
}

/** The run-queue gauges, as JSON or Prometheus text. */
export async function metrics(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  format: "json" | "prometheus",
) {
  const m = await agentMetrics(await s.deployment(caller, deploymentId));
  return format === "json" ? m : prometheusText(m, deploymentId);
}

/** What LoadExternalComponent inserts for an assistant's UI component (undefined: no such UI). */
export async function uiComponent(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  event: HttpEvent,
  agent: string,
  component: { name: string; shadowRootId?: string },
) {
  const d = await s.deployment(caller, deploymentId);
  const base = agentServerBase(event, deploymentId);
  const html = await uiComponentHtml(d, agent, component.name, component.shadowRootId, base);
  if (html === undefined) return undefined;
  // The SDK fetches this and inserts it into its own page, where these headers mean nothing. Opened as a document
  // instead (a form's POST navigating a signed-in tab, where custom auth admits the request), its script tags —
  // the deployment's code — would run with the platform's shared origin, the console's: sandboxed as custom routes are.
  return {
    html,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": HTML_SANDBOX,
      "x-content-type-options": "nosniff",
    },
  };
}

/** A file of the live revision's UI bundle (public; read from the artifact, no user code runs). */
export const uiFile = (_s: OpsContext, deploymentId: string, name: string, file: string) =>
  uiAsset(deploymentId, name, file);

/** The reference documentation page of the deployment's agent server. */
export const docs = (_s: OpsContext, deploymentId: string): string => docsPage(deploymentId);

/**
 * Health: 200 once a revision of the deployment serves, 503 before. Public, but told only to the deployment's own workspace: without an API key every id
 * answers 401 unread, and with one the deployment is read under the caller's workspace (one GetItem, found or
 * not), so another workspace's deployment answers exactly as a missing one.
 */
export async function health(
  _s: OpsContext,
  headers: Record<string, string | undefined>,
  deploymentId: string,
): Promise<{ ok: boolean }> {
  const tenant = await authenticate(headers);
  const d = await deployments.get({ tenant, id: deploymentId });
  if (!d) throw new NotFound("Deployment not found");
  if (!d.active_revision_id) throw new ServiceUnavailable("The deployment has no deployed revision yet");
  return { ok: true };
}
