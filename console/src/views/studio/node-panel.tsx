import type { NodeStatus } from "../../components/graph-layout.ts";
import { JsonBlock } from "../../components/json-editor.tsx";

// The node chosen on the graph: its status in the last run, its last update, and its breakpoints for the next
// run (pause before / after it).

export function NodePanel({
  id,
  status,
  update,
  hasUpdate,
  before,
  after,
  canPause,
  onToggle,
}: {
  id: string;
  status?: NodeStatus;
  update: unknown;
  hasUpdate: boolean;
  before: boolean;
  after: boolean;
  canPause: boolean;
  onToggle: (when: "before" | "after") => void;
}) {
  return (
    <section className="np" aria-label={`Node ${id}`}>
      <h2>
        Node {id} {status && <small className="muted">· {status}</small>}
      </h2>
      {canPause && (
        <fieldset className="np-bps">
          <legend className="sr-only">Breakpoints</legend>
          <button type="button" aria-pressed={before} onClick={() => onToggle("before")}>
            Pause before {id}
          </button>
          <button type="button" aria-pressed={after} onClick={() => onToggle("after")}>
            Pause after {id}
          </button>
        </fieldset>
      )}
      <h3>Last update</h3>
      {hasUpdate ? (
        <JsonBlock value={update} label={`Last update of ${id}`} />
      ) : (
        <p className="muted">None yet.</p>
      )}
    </section>
  );
}
