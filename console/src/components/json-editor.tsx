import { useId } from "react";

// A JSON text area with its problems listed under it (not JSON, or what a schema check found): the caller parses
// and validates, this shows the text and the complaints, tied to the field for screen readers.

export function JsonEditor({
  label,
  value,
  onChange,
  problems,
  rows = 8,
}: {
  label: string;
  value: string;
  onChange: (text: string) => void;
  problems: string[];
  rows?: number;
}) {
  const id = useId();
  return (
    <div className="json-editor">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        spellCheck={false}
        value={value}
        aria-invalid={problems.length > 0}
        aria-describedby={problems.length ? `${id}-problems` : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {problems.length > 0 && (
        <ul id={`${id}-problems`} className="json-problems" aria-label={`${label}: problems`}>
          {problems.slice(0, 8).map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** JSON shown for reading: indented, in a scrolling block the keyboard can reach (to scroll it). */
export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard
    <section className="json-block" aria-label={label ?? "JSON"} tabIndex={0}>
      <pre>{value === undefined ? "—" : JSON.stringify(value, null, 2)}</pre>
    </section>
  );
}
