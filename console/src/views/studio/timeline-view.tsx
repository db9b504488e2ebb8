import { type Branch, type Checkpoint, idOf, interruptsAt } from "./timeline.ts";

// A thread's checkpoints as branches side by side (timeline.ts): each checkpoint a button that opens it.

const stepLabel = (c: Checkpoint) => {
  const step = c.metadata?.step;
  const source = c.metadata?.source ?? "";
  const next = c.next.length ? ` → ${c.next.join(", ")}` : " · end";
  const waits = interruptsAt(c).length ? " · interrupted" : "";
  const failed = (c.tasks ?? []).some((t) => t.error) ? " · error" : "";
  return `Step ${step ?? "?"} ${source}${next}${waits}${failed}`;
};

export function TimelineView({
  branches,
  selected,
  onSelect,
}: {
  branches: Branch[];
  selected?: string;
  onSelect: (c: Checkpoint) => void;
}) {
  if (!branches.length) return <p className="muted">No checkpoints yet: run the graph.</p>;
  return (
    <div className="tl">
      {branches.map((b) => (
        <section key={b.number} className="tl-branch" aria-label={`Branch ${b.number}`}>
          <h3>
            Branch {b.number}
            {b.forkedFrom && (
              <small className="muted">
                {" "}
                forked from step {b.forkedFrom.step ?? "?"} of branch {b.forkedFrom.branch}
              </small>
            )}
          </h3>
          <ol>
            {b.checkpoints.map((c) => (
              <li key={idOf(c)}>
                <button
                  type="button"
                  className="tl-step"
                  aria-pressed={idOf(c) === selected}
                  data-checkpoint={idOf(c)}
                  onClick={() => onSelect(c)}
                >
                  {stepLabel(c)}
                </button>
              </li>
            ))}
          </ol>
        </section>
      ))}
    </div>
  );
}
