import { useMemo, useState } from "react";
import { JsonEditor } from "../../components/json-editor.tsx";
import type { Schemas } from "../../wire.ts";
import { FieldInput } from "./schema-fields.tsx";
import { emptyValue, fieldOf, parseJson, type Schema, toInput, validate } from "./schema-form.ts";

// Runs an assistant from a form built from its input schema (or raw JSON checked against the schema), with
// config and context from their schemas and the stream modes to ask for.

export const STREAM_MODES = ["values", "updates", "debug", "messages-tuple", "custom", "events"] as const;
const DEFAULT_MODES = ["values", "updates", "debug"];

export interface RunRequest {
  input: unknown;
  config?: { configurable: Record<string, unknown> };
  context?: Record<string, unknown>;
  stream_mode: string[];
}

/** One schema's value, as a form or as JSON; answers the value or the problems with it. */
function useSchemaValue(schema: Schema | null | undefined) {
  const field = useMemo(() => fieldOf(schema ?? { type: "object", properties: {} }), [schema]);
  const [formValue, setFormValue] = useState<unknown>(() => emptyValue(field));
  const [raw, setRaw] = useState<string | undefined>();
  const parsed = raw === undefined ? { value: toInput(field, formValue) } : parseJson(raw);
  const problems = parsed.error
    ? [parsed.error]
    : parsed.value === undefined
      ? []
      : validate(schema, parsed.value);
  return {
    field,
    formValue,
    setFormValue,
    raw,
    /** Switches to JSON (starting from the form's value) or back to the form. */
    toggleRaw: () =>
      setRaw((r) => (r === undefined ? JSON.stringify(toInput(field, formValue) ?? {}, null, 2) : undefined)),
    setRaw,
    value: parsed.value,
    problems,
  };
}

function SchemaSection({ title, state }: { title: string; state: ReturnType<typeof useSchemaValue> }) {
  return (
    <div className="rf-section">
      <div className="rf-head">
        <h3>{title}</h3>
        <button
          type="button"
          className="link"
          aria-pressed={state.raw !== undefined}
          onClick={state.toggleRaw}
        >
          {state.raw === undefined ? `${title} as JSON` : `${title} as form`}
        </button>
      </div>
      {state.raw === undefined ? (
        <FieldInput
          root
          field={state.field}
          label={title}
          value={state.formValue}
          onChange={state.setFormValue}
        />
      ) : (
        <JsonEditor
          label={`${title} JSON`}
          value={state.raw}
          onChange={state.setRaw}
          problems={state.problems}
        />
      )}
      {state.raw === undefined && state.problems.length > 0 && (
        <ul className="json-problems" aria-label={`${title}: problems`}>
          {state.problems.slice(0, 5).map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function RunForm({
  schemas,
  busy,
  onRun,
}: {
  schemas: Schemas | undefined;
  busy: boolean;
  onRun: (r: RunRequest) => void;
}) {
  const input = useSchemaValue(schemas?.input_schema);
  const config = useSchemaValue(schemas?.config_schema);
  const context = useSchemaValue(schemas?.context_schema);
  const [modes, setModes] = useState<string[]>(DEFAULT_MODES);
  const invalid = input.problems.length > 0 || config.problems.length > 0 || context.problems.length > 0;
  const hasObject = (v: unknown) => v && typeof v === "object" && Object.keys(v).length > 0;
  return (
    <form
      className="run-form"
      aria-label="Run the graph"
      onSubmit={(e) => {
        e.preventDefault();
        if (invalid || busy) return;
        onRun({
          input: input.value ?? {},
          ...(hasObject(config.value)
            ? { config: { configurable: config.value as Record<string, unknown> } }
            : {}),
          ...(hasObject(context.value) ? { context: context.value as Record<string, unknown> } : {}),
          stream_mode: modes,
        });
      }}
    >
      <SchemaSection title="Input" state={input} />
      {schemas?.config_schema && <SchemaSection title="Config" state={config} />}
      {schemas?.context_schema && <SchemaSection title="Context" state={context} />}
      <fieldset className="rf-modes">
        <legend>Stream modes</legend>
        {STREAM_MODES.map((m) => (
          <label key={m} className="check">
            <input
              type="checkbox"
              checked={modes.includes(m)}
              onChange={(e) =>
                setModes((old) => (e.target.checked ? [...old, m] : old.filter((x) => x !== m)))
              }
            />
            {m}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary" disabled={busy || invalid || !schemas}>
        {busy ? "Running…" : "Run"}
      </button>
    </form>
  );
}
