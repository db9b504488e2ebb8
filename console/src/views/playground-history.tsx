import { useEffect, useState } from "react";
import type { AgentServer } from "../agent-api.ts";
import type { ThreadState } from "../wire.ts";
import { messagesOf } from "./playground-chat.ts";
import { MessageList } from "./playground-messages.tsx";

// A thread's history by checkpoint (POST /threads/{id}/history, newest first): choosing one shows the
// thread's messages and values as they were at that checkpoint.
const checkpointLabel = (s: ThreadState) => {
  const step = s.metadata?.step ?? "?";
  const by = Object.keys(s.metadata?.writes ?? {}).join(", ") || s.metadata?.source || "";
  return `Checkpoint ${step}${by ? ` · ${by}` : ""}`;
};

export function History({
  server,
  threadId,
  version,
}: {
  server: AgentServer;
  threadId: string;
  version: number;
}) {
  const [states, setStates] = useState<ThreadState[]>();
  const [error, setError] = useState<string>();
  const [chosen, setChosen] = useState<string>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a finished run (version) adds checkpoints
  useEffect(() => {
    let live = true;
    server
      .history(threadId)
      .then((s) => live && setStates(s))
      .catch((e) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [server, threadId, version]);
  const selected = states?.find((s) => s.checkpoint?.checkpoint_id === chosen);
  return (
    <section className="card pg-history" aria-label="History">
      <h2>History</h2>
      {error && <p role="alert">{error}</p>}
      {!states && !error && <p className="muted">Loading…</p>}
      {states?.length === 0 && <p className="muted">No checkpoints yet.</p>}
      <ol className="pg-checkpoints">
        {states?.map((s) => {
          const id = s.checkpoint?.checkpoint_id ?? "";
          return (
            <li key={id}>
              <button
                type="button"
                className="link"
                aria-pressed={id === chosen}
                title={id}
                onClick={() => setChosen(id === chosen ? undefined : id)}
              >
                {checkpointLabel(s)}
              </button>{" "}
              <span className="muted">
                {messagesOf(s.values).length} messages
                {s.next.length ? ` · next: ${s.next.join(", ")}` : ""}
              </span>
            </li>
          );
        })}
      </ol>
      {selected && (
        <section aria-label="Checkpoint" className="pg-checkpoint">
          <h3>
            {checkpointLabel(selected)}{" "}
            <span className="muted">
              {selected.created_at ? new Date(selected.created_at).toLocaleString() : ""}
            </span>
          </h3>
          <MessageList messages={messagesOf(selected.values)} label="Checkpoint messages" />
          <details>
            <summary>Values</summary>
            <pre>{JSON.stringify(selected.values, null, 2)}</pre>
          </details>
        </section>
      )}
    </section>
  );
}
