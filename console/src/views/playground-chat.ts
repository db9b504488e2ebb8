import type { Interrupt, Message, StreamPart, ThreadState, ToolCall } from "../wire.ts";

// The chat's state while a run streams: `values` frames carry the thread's messages so far (authoritative);
// `messages` frames (stream mode messages-tuple) carry chunks of the message being generated, merged by id and
// shown after them until a `values` frame holds that message; `updates` frames carry `__interrupt__`.
export interface Chat {
  values: Message[];
  streamed: Message[];
  interrupts: Interrupt[];
  /** messages-tuple frames consumed in this view (the token-by-token stream at work). */
  chunks: number;
  running: boolean;
  error?: string;
}

export type ChatAction =
  | { type: "load"; state: ThreadState | undefined }
  | { type: "send"; message?: Message }
  | { type: "part"; part: StreamPart }
  | { type: "end"; error?: string };

export const emptyChat: Chat = { values: [], streamed: [], interrupts: [], chunks: 0, running: false };

export const messagesOf = (values: unknown): Message[] => {
  const m = (values as { messages?: unknown } | null)?.messages;
  return Array.isArray(m) ? (m as Message[]) : [];
};

/** The messages to show: the thread's, then the streamed ones it does not hold yet. */
export function shownMessages(chat: Chat): Message[] {
  const ids = new Set(chat.values.map((m) => m.id).filter(Boolean));
  return [...chat.values, ...chat.streamed.filter((m) => !m.id || !ids.has(m.id))];
}

export function chatReducer(chat: Chat, action: ChatAction): Chat {
  switch (action.type) {
    case "load":
      return {
        ...emptyChat,
        chunks: chat.chunks,
        values: messagesOf(action.state?.values),
        interrupts: pendingInterrupts(action.state),
      };
    case "send":
      return {
        ...chat,
        streamed: action.message ? [action.message] : [],
        interrupts: [],
        running: true,
        error: undefined,
      };
    case "end":
      return { ...chat, running: false, error: action.error ?? chat.error };
    case "part":
      return applyPart(chat, action.part);
  }
}

function applyPart(chat: Chat, { event, data }: StreamPart): Chat {
  const mode = event.split("|")[0];
  if (mode === "values") {
    const interrupts = data?.__interrupt__;
    return {
      ...chat,
      values: messagesOf(data),
      // The message typed here is in the thread now (it has the server's id).
      streamed: chat.streamed.filter((m) => !m.id?.startsWith("local-")),
      interrupts: Array.isArray(interrupts) && interrupts.length ? interrupts : chat.interrupts,
    };
  }
  if (mode === "updates") {
    const interrupts = data?.__interrupt__;
    return Array.isArray(interrupts) && interrupts.length ? { ...chat, interrupts } : chat;
  }
  if (mode === "messages" && Array.isArray(data) && data[0]) {
    return { ...chat, streamed: mergeChunk(chat.streamed, data[0] as Message), chunks: chat.chunks + 1 };
  }
  if (mode === "error") {
    const message = data?.message ?? data?.error ?? JSON.stringify(data);
    return { ...chat, error: String(message) };
  }
  return chat;
}

// A chunk's dict has `tool_call_chunks` (an AIMessageChunk's type is "ai" too); a whole message replaces.
const isChunk = (m: Message) => m.type.endsWith("Chunk") || Array.isArray(m.tool_call_chunks);

/** A chunk joins the message with its id (text appended, tool-call arguments concatenated); else it is new. */
export function mergeChunk(list: Message[], chunk: Message): Message[] {
  const at = chunk.id ? list.findIndex((m) => m.id === chunk.id) : -1;
  const normal = { ...chunk, type: chunk.type.replace(/MessageChunk$/, "").toLowerCase() || chunk.type };
  if (at < 0 || !isChunk(chunk)) {
    return at < 0 ? [...list, withToolCalls(normal)] : list.with(at, withToolCalls(normal));
  }
  const prev = list[at]!;
  const content =
    typeof prev.content === "string" && typeof chunk.content === "string"
      ? prev.content + chunk.content
      : chunk.content || prev.content;
  const toolChunks = [...(prev.tool_call_chunks ?? [])];
  for (const c of chunk.tool_call_chunks ?? []) {
    const i = toolChunks.findIndex((p) => p.index === c.index);
    if (i < 0) toolChunks.push({ ...c });
    else
      toolChunks[i] = {
        ...toolChunks[i],
        id: toolChunks[i]!.id ?? c.id,
        name: toolChunks[i]!.name ?? c.name,
        args: (toolChunks[i]!.args ?? "") + (c.args ?? ""),
      };
  }
  return list.with(at, withToolCalls({ ...prev, content, tool_call_chunks: toolChunks }));
}

/** Tool calls from the accumulated chunks (their arguments are JSON text until the last chunk). */
function withToolCalls(m: Message): Message {
  if (!m.tool_call_chunks?.length) return m;
  const calls: ToolCall[] = m.tool_call_chunks.map((c) => {
    let args: Record<string, unknown> = {};
    try {
      args = c.args ? JSON.parse(c.args) : {};
    } catch {
      args = { "(partial)": c.args };
    }
    return { id: c.id, name: c.name ?? "", args };
  });
  return { ...m, tool_calls: calls };
}

/** The interrupts waiting on a thread's state, wherever the server put them. */
export function pendingInterrupts(state: ThreadState | undefined): Interrupt[] {
  if (!state) return [];
  const fromTasks = (state.tasks ?? []).flatMap((t) => t.interrupts ?? []);
  return fromTasks.length ? fromTasks : (state.interrupts ?? []);
}
