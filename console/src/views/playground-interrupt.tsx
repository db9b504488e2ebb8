import { useState } from "react";
import type { Interrupt } from "../wire.ts";

// An interrupt waiting on the thread, with the ways to resume it: Approve, Edit (the pending tool call's
// arguments, one field each) or Reject. The decision is the resume value of a new run's `command`.
export type Decision = { action: "approve" | "edit" | "reject"; [arg: string]: unknown };

interface Pending {
  question?: string;
  tool_call?: { name?: string; args?: Record<string, unknown> };
}

export function InterruptPanel({
  interrupt,
  busy,
  onResume,
}: {
  interrupt: Interrupt;
  busy: boolean;
  onResume: (decision: Decision) => void;
}) {
  const value = (interrupt.value ?? {}) as Pending;
  const args = value.tool_call?.args ?? {};
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    ),
  );
  const fields = Object.keys(edited).length ? Object.keys(edited) : ["value"];
  return (
    <section className="card pg-interrupt" aria-label="Interrupt">
      <h2>Waiting for you</h2>
      <p>{value.question ?? "The run is waiting for input."}</p>
      {value.tool_call ? (
        <p>
          <code>{value.tool_call.name}</code> <code>{JSON.stringify(args)}</code>
        </p>
      ) : (
        <pre>{JSON.stringify(interrupt.value, null, 2)}</pre>
      )}
      {editing && (
        <form
          aria-label="Edit the call"
          onSubmit={(e) => {
            e.preventDefault();
            onResume({ action: "edit", ...edited });
          }}
        >
          {fields.map((k) => (
            <label key={k}>
              {k}
              <input
                value={edited[k] ?? ""}
                onChange={(e) => setEdited((s) => ({ ...s, [k]: e.target.value }))}
              />
            </label>
          ))}
          <button type="submit" className="primary" disabled={busy}>
            Resume with edits
          </button>
        </form>
      )}
      <div className="pg-actions">
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => onResume({ action: "approve" })}
        >
          Approve
        </button>
        <button type="button" disabled={busy} aria-pressed={editing} onClick={() => setEditing((x) => !x)}>
          Edit
        </button>
        <button type="button" disabled={busy} onClick={() => onResume({ action: "reject" })}>
          Reject
        </button>
      </div>
    </section>
  );
}
