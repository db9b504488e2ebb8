import { useState } from "react";
import { JsonBlock, JsonEditor } from "../../components/json-editor.tsx";
import { parseJson, type Schema, validate } from "./schema-form.ts";
import { type Checkpoint, idOf, interruptsAt, writesOf } from "./timeline.ts";

// One checkpoint of a thread: its values, what runs next, its tasks (errors, interrupts) and the step's writes;
// from it, the state edited (JSON checked against the state schema, written as a chosen node) and forked — a
// new run from the edited checkpoint — or replayed as it was.

export function CheckpointPanel({
  checkpoint,
  history,
  stateSchema,
  nodes,
  busy,
  onFork,
  onReplay,
}: {
  checkpoint: Checkpoint;
  history: Checkpoint[];
  stateSchema: Schema | null | undefined;
  nodes: string[];
  busy: boolean;
  onFork: (values: unknown, asNode: string | undefined, run: boolean) => void;
  onReplay: () => void;
}) {
  const writes = writesOf(checkpoint, history);
  const writer = Object.keys(writes ?? {}).find((n) => nodes.includes(n));
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(checkpoint.values ?? {}, null, 2));
  const [asNode, setAsNode] = useState(writer ?? "");
  const parsed = parseJson(text);
  const problems = parsed.error ? [parsed.error] : validate(stateSchema, parsed.value ?? {});
  const step = checkpoint.metadata?.step;
  return (
    <section className="cp" aria-label={`Checkpoint step ${step ?? "?"}`}>
      <h3>
        Checkpoint · step {step ?? "?"} <small className="muted">{idOf(checkpoint).slice(0, 13)}</small>
      </h3>
      <dl className="cp-facts">
        <dt>Source</dt>
        <dd>{checkpoint.metadata?.source ?? "—"}</dd>
        <dt>Next</dt>
        <dd>{checkpoint.next.length ? checkpoint.next.join(", ") : "— (the run ended here)"}</dd>
        <dt>Created</dt>
        <dd>{checkpoint.created_at ? new Date(checkpoint.created_at).toLocaleString() : "—"}</dd>
      </dl>
      {(checkpoint.tasks ?? []).length > 0 && (
        <>
          <h4>Tasks</h4>
          <ul className="cp-tasks">
            {checkpoint.tasks!.map((t) => (
              <li key={t.id}>
                <strong>{t.name}</strong>
                {t.error && <span className="cp-error"> error: {t.error}</span>}
                {(t.interrupts ?? []).length > 0 && <span> · interrupt</span>}
              </li>
            ))}
          </ul>
        </>
      )}
      {interruptsAt(checkpoint).length > 0 && (
        <>
          <h4>Interrupts</h4>
          <JsonBlock value={interruptsAt(checkpoint).map((i) => i.value)} label="Values of its interrupts" />
        </>
      )}
      <h4>Writes of this step</h4>
      <JsonBlock value={writes} label="Writes" />
      {!editing && (
        <>
          <h4>Values</h4>
          <JsonBlock value={checkpoint.values} label="Values" />
        </>
      )}
      <div className="cp-actions">
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing} disabled={busy}>
          {editing ? "Cancel editing" : "Edit state"}
        </button>
        <button type="button" onClick={onReplay} disabled={busy || !checkpoint.next.length}>
          Replay from here
        </button>
      </div>
      {editing && (
        <form
          className="cp-edit"
          aria-label="Edit state"
          onSubmit={(e) => {
            e.preventDefault();
            if (!problems.length) onFork(parsed.value ?? {}, asNode || undefined, true);
          }}
        >
          <JsonEditor label="State values" value={text} onChange={setText} problems={problems} rows={14} />
          <label>
            As node
            <select value={asNode} onChange={(e) => setAsNode(e.target.value)}>
              <option value="">(the graph decides)</option>
              {nodes.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <div className="cp-actions">
            <button type="submit" className="primary" disabled={busy || problems.length > 0}>
              Fork from here
            </button>
            <button
              type="button"
              disabled={busy || problems.length > 0}
              onClick={() => onFork(parsed.value ?? {}, asNode || undefined, false)}
            >
              Save state only
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
