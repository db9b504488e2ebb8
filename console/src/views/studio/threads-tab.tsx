import { useEffect, useState } from "react";
import type { AgentServer } from "../../agent-api.ts";
import { useAction } from "../../hooks.ts";
import type { Assistant, Thread } from "../../wire.ts";
import { ListTable } from "./list-table.tsx";
import { parseJson } from "./schema-form.ts";

// A deployment's threads, searched by status, metadata and values (POST /threads/search); one opens in the graph
// view with its timeline, under the assistant that ran it.

const STATUSES = ["", "idle", "busy", "interrupted", "error"];

export function ThreadsTab({
  server,
  assistant,
  onOpen,
}: {
  server: AgentServer;
  assistant: Assistant | undefined;
  onOpen: (threadId: string, assistantId?: string) => void;
}) {
  const [status, setStatus] = useState("");
  const [metadata, setMetadata] = useState("");
  const [values, setValues] = useState("");
  const [onlyThis, setOnlyThis] = useState(true);
  const [threads, setThreads] = useState<Thread[]>();
  const { error, setError, act } = useAction();
  const meta = parseJson(metadata);
  const vals = parseJson(values);

  async function search() {
    setError(undefined);
    if (meta.error || vals.error) return setError(meta.error ?? vals.error);
    const filter = {
      ...(meta.value as object | undefined),
      ...(onlyThis && assistant ? { graph_id: assistant.graph_id } : {}),
    };
    await act(
      server
        .threads({
          ...(status ? { status } : {}),
          ...(Object.keys(filter).length ? { metadata: filter } : {}),
          ...(vals.value ? { values: vals.value } : {}),
        })
        .then(setThreads),
    );
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first listing, then on demand
  useEffect(() => void search(), [assistant?.assistant_id]);

  return (
    <section className="card" aria-label="Threads">
      <h2>Threads</h2>
      <form
        className="studio-search"
        aria-label="Search threads"
        onSubmit={(e) => {
          e.preventDefault();
          void search();
        }}
      >
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || "any"}
              </option>
            ))}
          </select>
        </label>
        <label>
          Metadata (JSON)
          <input
            value={metadata}
            onChange={(e) => setMetadata(e.target.value)}
            placeholder='{"user": "ada"}'
          />
        </label>
        <label>
          Values (JSON)
          <input value={values} onChange={(e) => setValues(e.target.value)} placeholder='{"topic": "x"}' />
        </label>
        <label className="check">
          <input type="checkbox" checked={onlyThis} onChange={(e) => setOnlyThis(e.target.checked)} />
          This assistant's graph only
        </label>
        <button type="submit">Search</button>
      </form>
      {error && <p role="alert">{error}</p>}
      {threads?.length === 0 && <p className="muted">No threads match.</p>}
      <ListTable caption="Threads found" columns={["Thread", "Status", "Created", "Metadata"]}>
        {threads?.map((t) => (
          <tr key={t.thread_id}>
            <td>
              <button
                type="button"
                className="link"
                onClick={() => onOpen(t.thread_id, t.metadata?.assistant_id as string | undefined)}
              >
                {t.thread_id.slice(0, 8)}
              </button>
            </td>
            <td>{t.status ?? "—"}</td>
            <td>{new Date(t.created_at).toLocaleString()}</td>
            <td>
              <code>{JSON.stringify(t.metadata ?? {})}</code>
            </td>
          </tr>
        ))}
      </ListTable>
    </section>
  );
}
