import { ApiError, api, headers } from "../api.ts";

// The playground's client for one deployment's agent server (`/agents/<id>`, the LangGraph server API, same
// origin). Plain fetch + a small SSE reader rather than @langchain/langgraph-sdk: the SDK's browser bundle pulls
// in langsmith and @langchain/core (~440 kB minified) for the five calls used here.

/** A message as the agent server sends it: a LangChain message dict (`type` "human" | "ai" | "tool" | …). */
export interface Message {
  id?: string;
  type: string;
  content: unknown;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_chunks?: { id?: string; name?: string; args?: string; index?: number }[];
  tool_call_id?: string;
  status?: string;
}

export interface ToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name?: string;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at?: string;
  status?: string;
  metadata?: Record<string, unknown>;
}

export interface Interrupt {
  id?: string;
  value: unknown;
}

/** A thread's state at one checkpoint (GET /threads/{id}/state, POST /threads/{id}/history). */
export interface ThreadState {
  values: { messages?: Message[]; [key: string]: unknown } | null;
  next: string[];
  tasks?: { id: string; name: string; interrupts?: Interrupt[] }[];
  interrupts?: Interrupt[];
  checkpoint: { checkpoint_id: string } | null;
  metadata?: { step?: number; source?: string; writes?: Record<string, unknown> | null } | null;
  created_at?: string | null;
}

export interface StreamPart {
  event: string;
  data: any;
}

/** The interrupts waiting on a thread's state, wherever the server put them. */
export function pendingInterrupts(state: ThreadState | undefined): Interrupt[] {
  if (!state) return [];
  const fromTasks = (state.tasks ?? []).flatMap((t) => t.interrupts ?? []);
  return fromTasks.length ? fromTasks : (state.interrupts ?? []);
}

export function agentServer(deploymentId: string) {
  const base = `/agents/${encodeURIComponent(deploymentId)}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(method, base + path, body);
  return {
    assistants: () => call<Assistant[]>("POST", "/assistants/search", { limit: 100 }),
    threads: () =>
      call<Thread[]>("POST", "/threads/search", { limit: 50, sort_by: "created_at", sort_order: "desc" }),
    createThread: (metadata: Record<string, unknown>) => call<Thread>("POST", "/threads", { metadata }),
    state: (threadId: string) => call<ThreadState>("GET", `/threads/${threadId}/state`),
    history: (threadId: string) =>
      call<ThreadState[]>("POST", `/threads/${threadId}/history`, { limit: 100 }),
    /** POST /threads/{id}/runs/stream: the run's frames as they arrive. */
    async *stream(threadId: string, body: Record<string, unknown>, signal?: AbortSignal) {
      const r = await fetch(`${base}/threads/${threadId}/runs/stream`, {
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

/** Server-sent events: frames split by a blank line, `event:` and `data:` lines (data as JSON). */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n?/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const text = data.join("\n");
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      yield { event, data: parsed };
    }
  }
}
