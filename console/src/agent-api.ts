import { ApiError, api, headers } from "./api.ts";
import { serverSentEvents } from "./sse.ts";
import type { Assistant, Cron, Schemas, ServerGraph, StoreItem, Thread, ThreadState } from "./wire.ts";

// The console's one client of a deployment's agent server (`/agents/<id>`, the LangGraph server API, same origin),
// for the playground and the studio. Plain fetch + a small SSE reader rather than @langchain/langgraph-sdk: the
// SDK's browser bundle pulls in langsmith and @langchain/core (~440 kB minified) for the calls used here.

export type RunBody = Record<string, unknown>;

const q = encodeURIComponent;

export function agentServer(deploymentId: string) {
  const base = `/agents/${q(deploymentId)}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(method, base + path, body);
  return {
    deploymentId,
    assistants: (body: Record<string, unknown> = {}) =>
      call<Assistant[]>("POST", "/assistants/search", { limit: 100, ...body }),
    assistant: (id: string) => call<Assistant>("GET", `/assistants/${q(id)}`),
    createAssistant: (body: Record<string, unknown>) => call<Assistant>("POST", "/assistants", body),
    updateAssistant: (id: string, body: Record<string, unknown>) =>
      call<Assistant>("PATCH", `/assistants/${q(id)}`, body),
    deleteAssistant: (id: string) => call<unknown>("DELETE", `/assistants/${q(id)}`),
    versions: (id: string) => call<Assistant[]>("POST", `/assistants/${q(id)}/versions`, { limit: 100 }),
    setLatest: (id: string, version: number) =>
      call<Assistant>("POST", `/assistants/${q(id)}/latest`, { version }),
    graph: (id: string, xray: boolean) =>
      call<ServerGraph>("GET", `/assistants/${q(id)}/graph${xray ? "?xray=true" : ""}`),
    schemas: (id: string) => call<Schemas>("GET", `/assistants/${q(id)}/schemas`),
    threads: (body: Record<string, unknown> = {}) =>
      call<Thread[]>("POST", "/threads/search", {
        limit: 50,
        sort_by: "created_at",
        sort_order: "desc",
        ...body,
      }),
    createThread: (metadata: Record<string, unknown>) => call<Thread>("POST", "/threads", { metadata }),
    /** The thread's checkpoints, every branch, newest first. */
    history: (threadId: string, limit = 100) =>
      call<ThreadState[]>("POST", `/threads/${q(threadId)}/history`, { limit }),
    state: (threadId: string) => call<ThreadState>("GET", `/threads/${q(threadId)}/state`),
    updateState: (threadId: string, body: { values: unknown; checkpoint_id?: string; as_node?: string }) =>
      call<{ checkpoint: { checkpoint_id: string } }>("POST", `/threads/${q(threadId)}/state`, body),
    storeNamespaces: (prefix: string[] = []) =>
      call<{ namespaces: string[][] }>("POST", "/store/namespaces", { prefix, limit: 100 }),
    storeSearch: (namespace_prefix: string[], query?: string) =>
      call<{ items: StoreItem[] }>("POST", "/store/items/search", {
        namespace_prefix,
        limit: 50,
        ...(query ? { query } : {}),
      }),
    storePut: (namespace: string[], key: string, value: unknown) =>
      call<unknown>("PUT", "/store/items", { namespace, key, value }),
    storeDelete: (namespace: string[], key: string) =>
      call<unknown>("DELETE", "/store/items", { namespace, key }),
    crons: (assistantId?: string) =>
      call<Cron[]>("POST", "/runs/crons/search", {
        limit: 100,
        ...(assistantId ? { assistant_id: assistantId } : {}),
      }),
    createCron: (body: Record<string, unknown>) => call<Cron>("POST", "/runs/crons", body),
    updateCron: (id: string, body: Record<string, unknown>) =>
      call<Cron>("PATCH", `/runs/crons/${q(id)}`, body),
    deleteCron: (id: string) => call<unknown>("DELETE", `/runs/crons/${q(id)}`),
    /** POST /threads/{id}/runs/stream: the run's frames as they arrive. */
    async *stream(threadId: string, body: RunBody, signal?: AbortSignal) {
      const r = await fetch(`${base}/threads/${q(threadId)}/runs/stream`, {
        method: "POST",
        headers: headers({ "content-type": "application/json", accept: "text/event-stream" }),
        body: JSON.stringify(body),
        signal,
      });
      if (!r.ok || !r.body) {
        const text = await r.text();
        let detail: unknown = text || r.statusText;
        try {
          detail = JSON.parse(text).detail ?? detail;
        } catch {}
        throw new ApiError(r.status, detail);
      }
      yield* serverSentEvents(r.body);
    },
  };
}

export type AgentServer = ReturnType<typeof agentServer>;
