import { useState } from "react";
import { JsonBlock, JsonEditor } from "../../components/json-editor.tsx";
import { parseJson } from "./schema-form.ts";

// A run stopped at an interrupt: its value shown, answered with a `Command` — a resume value, a `goto` to a node,
// a state `update`, or several at once (a resume with a goto sends the run on from the answered node). A run
// paused at a breakpoint (next nodes, no interrupt) is continued instead.

export interface Command {
  resume?: unknown;
  goto?: string;
  update?: unknown;
}

export function InterruptAnswer({
  interrupts,
  nodes,
  busy,
  onAnswer,
}: {
  interrupts: { id?: string; value: unknown }[];
  nodes: string[];
  busy: boolean;
  onAnswer: (command: Command) => void;
}) {
  const [resume, setResume] = useState("");
  const [update, setUpdate] = useState("");
  const [goto, setGoto] = useState("");
  const r = parseJson(resume);
  const u = parseJson(update);
  const command: Command = {
    ...(resume.trim() ? { resume: r.value } : {}),
    ...(goto ? { goto } : {}),
    ...(update.trim() ? { update: u.value } : {}),
  };
  const empty = Object.keys(command).length === 0;
  return (
    <section className="ia" aria-label="Interrupt">
      <h3>Interrupted</h3>
      <JsonBlock value={interrupts.map((i) => i.value)} label="Value of the interrupt" />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!r.error && !u.error) onAnswer(empty ? { resume: null } : command);
        }}
      >
        <JsonEditor
          label="Resume value (JSON)"
          value={resume}
          onChange={setResume}
          problems={r.error ? [r.error] : []}
          rows={3}
        />
        <label>
          Go to node
          <select value={goto} onChange={(e) => setGoto(e.target.value)}>
            <option value="">(none)</option>
            {nodes.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        <JsonEditor
          label="State update (JSON)"
          value={update}
          onChange={setUpdate}
          problems={u.error ? [u.error] : []}
          rows={3}
        />
        <button type="submit" className="primary" disabled={busy || !!r.error || !!u.error}>
          Answer
        </button>
      </form>
    </section>
  );
}

export function PausedAt({
  next,
  busy,
  onContinue,
}: {
  next: string[];
  busy: boolean;
  onContinue: () => void;
}) {
  return (
    <section className="ia" aria-label="Paused">
      <p>
        Paused before <strong>{next.join(", ")}</strong>.
      </p>
      <button type="button" className="primary" disabled={busy} onClick={onContinue}>
        Continue
      </button>
    </section>
  );
}
