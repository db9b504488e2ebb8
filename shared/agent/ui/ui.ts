import { GetObjectCommand } from "@aws-sdk/client-s3";
import { s3 } from "../../aws/clients.ts";
import { isUiName, uiGlobal } from "../../build/ui-names.ts";
import { config } from "../../config.ts";
import type { HttpEvent } from "../../http/event.ts";
import { recentDeploymentById } from "../../records/control.ts";
import { artifactManifest } from "../artifact/artifact.ts";
import { resolveAssistant } from "../assistants/assistants.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";

// Generative UI (langgraph.json `ui`), as the SDK's LoadExternalComponent loads it: `POST /ui/{name}` (the
// deployment's runtime, with the API key) answers HTML, a stylesheet link per CSS file and a script whose
// onload calls `__LGUI_<name>.render(component, shadowRootId)` (uiGlobal); the browser then fetches those files from
// `GET /ui/{name}/{file}` (the platform, from the live revision's artifact: no API key goes with a <script src>).

/** A file segment of a UI path: no separators, no dot-only names. */
const SEGMENT = /^(?!\.+$)[A-Za-z0-9_$.-]{1,128}$/;
const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};
const attr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The UI entry a request names: the `ui` name itself, else the graph of the assistant (or graph id) it names. */
async function uiEntry(d: AgentDeployment, name: string) {
  const ui = (await artifactManifest(d.runtime?.artifact))?.ui ?? {};
  if (ui[name]) return { name, files: ui[name].files };
  const graphId = await resolveAssistant(d, name).then(
    (a) => a.graph_id,
    () => undefined,
  );
  return graphId && ui[graphId] ? { name: graphId, files: ui[graphId].files } : undefined;
}

/** The agent server's public address as the caller reached it (an API Gateway stage included). */
export function agentServerBase(event: HttpEvent, deploymentId: string): string {
  const headers = event.headers ?? {};
  const host = headers.host ?? event.requestContext?.domainName ?? "localhost";
  const proto = headers["x-forwarded-proto"]?.split(",")[0]?.trim() || "http";
  const stage = event.requestContext?.stage;
  const staged = stage && stage !== "$default" && host.includes(".execute-api.") ? `/${stage}` : "";
  return `${proto}://${host}${staged}/agents/${encodeURIComponent(deploymentId)}`;
}

/**
 * The HTML that loads component `component` of the UI `name` names into the element `shadowRootId` (left as
 * the `{{shadowRootId}}` placeholder LoadExternalComponent fills in when the request names none).
 */
export async function uiComponentHtml(
  d: AgentDeployment,
  name: string,
  component: string,
  shadowRootId: string | undefined,
  base: string,
): Promise<string | undefined> {
  const entry = await uiEntry(d, name);
  if (!entry) return undefined;
  const url = (file: string) => `${base}/ui/${encodeURIComponent(entry.name)}/${encodeURIComponent(file)}`;
  const lines = entry.files
    .filter((f) => f.endsWith(".css"))
    .map((f) => `<link rel="stylesheet" href="${attr(url(f))}" />`);
  const js = entry.files.find((f) => f.endsWith(".js"));
  if (js) {
    const call = `${uiGlobal(entry.name)}.render(${JSON.stringify(component)}, ${JSON.stringify(shadowRootId ?? "{{shadowRootId}}")})`;
    lines.push(`<script src="${attr(url(js))}" onload="${attr(call)}"></script>`);
  }
  return lines.join("\n");
}

/** A file of the live revision's UI bundle `name`: its content type and bytes, or undefined. */
export async function uiAsset(
  deploymentId: string,
  name: string,
  file: string,
): Promise<{ type: string; body: Buffer } | undefined> {
  if (!isUiName(name) || !SEGMENT.test(file)) return undefined;
  const prefix = (await recentDeploymentById(deploymentId))?.active_artifact_prefix;
  if (!prefix) return undefined;
  try {
    const obj = await s3().send(
      new GetObjectCommand({ Bucket: config.artifactBucket, Key: `${prefix}ui/${name}/${file}` }),
    );
    const body = Buffer.from(await obj.Body!.transformToByteArray());
    return { type: TYPES[file.split(".").pop() ?? ""] ?? "application/octet-stream", body };
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === "NoSuchKey" || e.$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}
