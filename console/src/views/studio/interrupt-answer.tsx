import { useState } from "react";
import { JsonBlock, JsonEditor } from "../../components/json-editor.tsx";
import { parseJson } from "./schema-form.ts";

// A run stopped at an interrupt: its value shown, answered with a `Command` — a resume value, a `goto` to a node,
// or a state `update`. A run paused at a breakpoint (next nodes, no interrupt) is continued instead.

export type Command = { resume: unknown } | { goto: string } | { update: unknown };

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
  const [kind, setKind] = useState<"resume" | "goto" | "update">("resume");
  const [text, setText] = useState("");
  const [goto, setGoto] = useState(nodes[0] ?? "");
  const parsed = parseJson(text);
  const problems = kind !== "goto" && parsed.error ? [parsed.error] : [];
  return (
    <section className="ia" aria-label="Interrupt">
      <h3>Interrupted</h3>
      <JsonBlock value={interrupts.map((i) => i.value)} label="Value of the interrupt" />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (problems.length) return;
          if (kind === "goto") onAnswer({ goto });
          else if (kind === "update") onAnswer({ update: parsed.value ?? {} });
          else onAnswer({ resume: parsed.value ?? null });
        }}
      >
        <fieldset className="ia-kind">
          <legend>Answer with</legend>
          {(["resume", "goto", "update"] as const).map((k) => (
            <label key={k} className="check">
              <input type="radio" name="ia-kind" checked={kind === k} onChange={() => setKind(k)} />
              {k === "resume" ? "a resume value" : k === "goto" ? "a goto" : "a state update"}
            </label>
          ))}
        </fieldset>
        {kind === "goto" ? (
          <label>
            Go to node
            <select value={goto} onChange={(e) => setGoto(e.target.value)}>
              {nodes.map((n) => (
                <option key={n}>{n}</option>
              ))}
            </select>
          </label>
        ) : (
          <JsonEditor
            label={kind === "resume" ? "Resume value (JSON)" : "State update (JSON)"}
            value={text}
            onChange={setText}
            problems={problems}
            rows={4}
          />
        )}
        <button type="submit" className="primary" disabled={busy || problems.length > 0}>
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
