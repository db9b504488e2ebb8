import {
  type AssistantCreate,
  type AssistantFilter,
  type AssistantPatch,
  type AssistantSearch,
  countAssistants,
  createAssistant,
  deleteAssistant,
  graphOf,
  listVersions,
  searchAssistants,
  setLatestVersion,
  updateAssistant,
} from "../assistants/assistants.ts";
import { drawGraph, graphSchemas, subgraphSchemas } from "../assistants/graph-schemas.ts";
import type { Caller, OpsContext } from "./caller.ts";
import { assistantCreateAccess, authorizedAssistant, searchScope } from "./checks.ts";

// Assistants: each operation looks the deployment up for the caller and asks the deployment's Auth
// (assistants:create / read / update / delete / search) before it reads or writes.

export async function create(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: AssistantCreate & { metadata?: Record<string, unknown> },
) {
  const d = await s.deployment(caller, deploymentId);
  const inScope = await assistantCreateAccess(body);
  return inScope(await createAssistant(d, body));
}

export async function search(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<AssistantSearch, "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  const auth = await searchScope("assistants:search", body);
  return searchAssistants(d, { ...body, auth });
}

export async function count(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<AssistantFilter, "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  return countAssistants(d, { ...body, auth: await searchScope("assistants:search", body) });
}

export async function get(s: OpsContext, caller: Caller, deploymentId: string, assistantId: string) {
  return authorizedAssistant(await s.deployment(caller, deploymentId), assistantId);
}

export async function update(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  body: AssistantPatch,
) {
  const d = await s.deployment(caller, deploymentId);
  await authorizedAssistant(d, assistantId, "update", body as Record<string, unknown>);
  return updateAssistant(d, assistantId, body);
}

export async function remove(s: OpsContext, caller: Caller, deploymentId: string, assistantId: string) {
  const d = await s.deployment(caller, deploymentId);
  await authorizedAssistant(d, assistantId, "delete");
  await deleteAssistant(d, assistantId);
}

export async function versions(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  body: Parameters<typeof listVersions>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await authorizedAssistant(d, assistantId);
  return listVersions(d, assistantId, body);
}

export async function setLatest(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  version: number,
) {
  const d = await s.deployment(caller, deploymentId);
  await authorizedAssistant(d, assistantId, "update", { version });
  return setLatestVersion(d, assistantId, version);
}

/** The drawing of the assistant's graph (xray: its subgraphs' nodes too). */
export async function graph(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  xray: Parameters<typeof drawGraph>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  const a = await authorizedAssistant(d, assistantId);
  return drawGraph(await graphOf(d, a.graph_id), a.config, xray);
}

export async function schemas(s: OpsContext, caller: Caller, deploymentId: string, assistantId: string) {
  const d = await s.deployment(caller, deploymentId);
  const a = await authorizedAssistant(d, assistantId);
  return graphSchemas(a.graph_id, await graphOf(d, a.graph_id));
}

export async function subgraphs(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  namespace: string | undefined,
  recurse: boolean | undefined,
) {
  const d = await s.deployment(caller, deploymentId);
  const a = await authorizedAssistant(d, assistantId);
  return subgraphSchemas(a.graph_id, await graphOf(d, a.graph_id), namespace, recurse);
}
