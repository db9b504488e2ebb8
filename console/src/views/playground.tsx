import "./playground-styles.css";
import { useEffect, useMemo, useReducer, useRef, useState } from "react";
import { type AgentServer, agentServer } from "../agent-api.ts";
import { AssistantSelect } from "../components/assistant-select.tsx";
import { DeploymentPicker } from "../components/deployment-picker.tsx";
import { href } from "../router.ts";
import type { Assistant, Thread } from "../wire.ts";
import { type ChatAction, chatReducer, emptyChat, shownMessages } from "./playground-chat.ts";
import { History } from "./playground-history.tsx";
import { type Decision, InterruptPanel } from "./playground-interrupt.tsx";
import { MessageList } from "./playground-messages.tsx";

// The chat playground on a deployment's agent server (#/playground/<deployment id>): pick an assistant, pick or
// start a thread, send a message and watch the run stream (messages-tuple chunks as they arrive, tool calls
// and their results), resume an interrupt, browse the thread's checkpoints.
const STREAM_MODE = ["messages-tuple", "values", "updates"];

export function Playground({ route }: { route: string[] }) {
  const deploymentId = route[0];
  if (!deploymentId)
    return (
      <DeploymentPicker
        section="playground"
        title="Playground"
        intro="Chat with a deployment's agents."
        className="pg"
      />
    );
  return <ChatPlayground key={deploymentId} deploymentId={deploymentId} initialAssistant={route[1]} />;
}

const threadLabel = (t: Thread) =>
  `${t.thread_id.slice(0, 8)} · ${new Date(t.created_at).toLocaleString()}${t.status ? ` · ${t.status}` : ""}`;

function ChatPlayground({
  deploymentId,
  initialAssistant,
}: {
  deploymentId: string;
  initialAssistant?: string;
}) {
  const server = useMemo(() => agentServer(deploymentId), [deploymentId]);
  const [threadId, setThreadId] = useState<string>();
  const [chat, dispatch] = useReducer(chatReducer, emptyChat);
  const [text, setText] = useState("");
  const [error, setError] = useState<string>();
  const [showHistory, setShowHistory] = useState(false);
  const [version, setVersion] = useState(0);
  // A thread this view just created and is streaming into: its (empty) state is not loaded over the stream.
  const fresh = useRef<string | undefined>(undefined);
  // The studio's chat mode opens on the assistant chosen there (#/playground/<deployment>/<assistant>).
  const { assistants, assistantId, setAssistantId } = useAssistants(server, initialAssistant, setError);
  const [threads, setThreads] = useThreads(server, version, setError);
  const run = useStreamRun(server, assistantId, dispatch, () => setVersion((v) => v + 1));

  useEffect(() => {
    if (!threadId) return dispatch({ type: "load", state: undefined });
    if (fresh.current === threadId) return;
    server
      .state(threadId)
      .then((state) => dispatch({ type: "load", state }))
      .catch((e) => setError(e.message));
  }, [server, threadId]);

  const assistant = assistants?.find((a) => a.assistant_id === assistantId);
  const shownThreads = threads.filter(
    (t) => !t.metadata?.graph_id || t.metadata.graph_id === assistant?.graph_id,
  );

  async function send() {
    const message = text.trim();
    if (!message || !assistant || chat.running) return;
    setError(undefined);
    let tid = threadId;
    if (!tid) {
      try {
        const t = await server.createThread({
          graph_id: assistant.graph_id,
          assistant_id: assistant.assistant_id,
        });
        tid = t.thread_id;
        fresh.current = tid;
        setThreads((list) => [t, ...list]);
        setThreadId(tid);
      } catch (e) {
        return setError((e as Error).message);
      }
    }
    setText("");
    dispatch({ type: "send", message: { id: `local-${Date.now()}`, type: "human", content: message } });
    await run(tid, { input: { messages: [{ role: "user", content: message }] } });
  }

  function resume(decision: Decision) {
    if (!threadId || chat.running) return;
    dispatch({ type: "send" });
    void run(threadId, { command: { resume: decision } });
  }

  const chooseThread = (id: string | undefined) => {
    fresh.current = undefined;
    setThreadId(id);
  };

  return (
    <section className="pg">
      <h1>Playground</h1>
      <p className="muted">
        Deployment <code>{deploymentId}</code> · <a href={href("playground")}>another deployment</a>
      </p>
      {error && <p role="alert">{error}</p>}
      <PlaygroundBar
        assistants={assistants}
        assistantId={assistantId}
        onAssistant={(id) => {
          setAssistantId(id);
          chooseThread(undefined);
        }}
        threads={shownThreads}
        threadId={threadId}
        onThread={chooseThread}
        running={chat.running}
        showHistory={showHistory}
        onHistory={() => setShowHistory((x) => !x)}
      />
      <div className={showHistory && threadId ? "pg-main pg-with-history" : "pg-main"}>
        <section className="pg-chat" aria-label="Chat">
          <MessageList messages={shownMessages(chat)} label="Messages" streaming={chat.running} />
          <p role="status" className="muted pg-status">
            {chat.running ? "Streaming… " : ""}
            {chat.chunks ? `${chat.chunks} message chunks streamed` : ""}
          </p>
          {chat.error && <p role="alert">{chat.error}</p>}
          {chat.interrupts.length > 0 && !chat.running && (
            <InterruptPanel
              key={chat.interrupts[0]!.id ?? JSON.stringify(chat.interrupts[0]!.value)}
              interrupt={chat.interrupts[0]!}
              busy={chat.running}
              onResume={resume}
            />
          )}
          <Composer
            text={text}
            onText={setText}
            onSend={() => void send()}
            disabled={!assistant || chat.running || !text.trim()}
          />
        </section>
        {showHistory && threadId && <History server={server} threadId={threadId} version={version} />}
      </div>
    </section>
  );
}

/** The assistant and thread chosen, a new thread, the history's toggle. */
function PlaygroundBar(p: {
  assistants: Assistant[] | undefined;
  assistantId: string | undefined;
  onAssistant: (id: string) => void;
  threads: Thread[];
  threadId: string | undefined;
  onThread: (id: string | undefined) => void;
  running: boolean;
  showHistory: boolean;
  onHistory: () => void;
}) {
  return (
    <div className="pg-bar">
      <label htmlFor="pg-assistant">
        Assistant
        <AssistantSelect
          id="pg-assistant"
          assistants={p.assistants}
          value={p.assistantId}
          onChange={p.onAssistant}
        />
      </label>
      <label>
        Thread
        <select value={p.threadId ?? ""} onChange={(e) => p.onThread(e.target.value || undefined)}>
          <option value="">New thread</option>
          {p.threads.map((t) => (
            <option key={t.thread_id} value={t.thread_id}>
              {threadLabel(t)}
            </option>
          ))}
        </select>
      </label>
      <button type="button" onClick={() => p.onThread(undefined)} disabled={p.running}>
        New thread
      </button>
      <button type="button" aria-pressed={p.showHistory} disabled={!p.threadId} onClick={p.onHistory}>
        History
      </button>
    </div>
  );
}

/** The message box: Enter sends, Shift+Enter starts a new line. */
function Composer({
  text,
  onText,
  onSend,
  disabled,
}: {
  text: string;
  onText: (t: string) => void;
  onSend: () => void;
  disabled: boolean;
}) {
  return (
    <form
      className="pg-composer"
      aria-label="Send a message"
      onSubmit={(e) => {
        e.preventDefault();
        onSend();
      }}
    >
      <label htmlFor="pg-input">Message</label>
      <textarea
        id="pg-input"
        rows={2}
        value={text}
        placeholder="Ask the agent…"
        onChange={(e) => onText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            onSend();
          }
        }}
      />
      <button type="submit" className="primary" disabled={disabled}>
        Send
      </button>
    </form>
  );
}

/** The deployment's assistants, one of them chosen (the first unless one was asked for). */
function useAssistants(server: AgentServer, initial: string | undefined, onError: (e: string) => void) {
  const [assistants, setAssistants] = useState<Assistant[]>();
  const [assistantId, setAssistantId] = useState<string | undefined>(initial);
  useEffect(() => {
    server
      .assistants()
      .then((a) => {
        setAssistants(a);
        setAssistantId((id) => id ?? a[0]?.assistant_id);
      })
      .catch((e) => onError(e.message));
  }, [server, onError]);
  return { assistants, assistantId, setAssistantId };
}

/** The deployment's threads, read again after each run (`version`): a finished run changes their statuses. */
function useThreads(server: AgentServer, version: number, onError: (e: string) => void) {
  const [threads, setThreads] = useState<Thread[]>([]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a finished run (version) changes thread statuses
  useEffect(() => {
    server
      .threads()
      .then(setThreads)
      .catch((e) => onError(e.message));
  }, [server, version, onError]);
  return [threads, setThreads] as const;
}

/** Streams a run into the chat, then loads the thread's state; the stream stops when the view goes. */
function useStreamRun(
  server: AgentServer,
  assistantId: string | undefined,
  dispatch: (a: ChatAction) => void,
  ended: () => void,
) {
  const stop = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => stop.current?.abort(), []);
  return async (tid: string, body: Record<string, unknown>) => {
    const ctl = new AbortController();
    stop.current = ctl;
    let failed: string | undefined;
    try {
      const frames = server.stream(
        tid,
        { assistant_id: assistantId, stream_mode: STREAM_MODE, ...body },
        ctl.signal,
      );
      for await (const part of frames) dispatch({ type: "part", part });
    } catch (e) {
      if (!ctl.signal.aborted) failed = (e as Error).message;
    }
    try {
      dispatch({ type: "load", state: await server.state(tid) });
    } catch {}
    dispatch({ type: "end", error: failed });
    ended();
  };
}
