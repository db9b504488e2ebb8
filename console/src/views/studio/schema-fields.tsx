import { useId } from "react";
import { emptyValue, type Field, type FormMessage, type Property } from "./schema-form.ts";

// The inputs of a form built from a JSON schema (schema-form.ts): one input per field kind, fieldsets for nested
// objects, add/remove for arrays, a role and a text per chat message.

interface Props {
  field: Field;
  value: unknown;
  onChange: (v: unknown) => void;
  label: string;
  description?: string;
  /** The form's top object: its fields without a box (the section's heading names it). */
  root?: boolean;
}

export function FieldInput(props: Props) {
  const { field, label } = props;
  if (field.kind === "object") return <ObjectFields {...props} properties={field.properties} />;
  if (field.kind === "messages") return <MessagesField {...props} />;
  if (field.kind === "array") return <ArrayField {...props} items={field.items} />;
  return (
    <Labelled label={label} description={props.description}>
      {(id) => <Scalar {...props} id={id} />}
    </Labelled>
  );
}

function Labelled({
  label,
  description,
  children,
}: {
  label: string;
  description?: string;
  children: (id: string) => React.ReactNode;
}) {
  const id = useId();
  return (
    <div className="sf-field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {description && <small className="muted">{description}</small>}
    </div>
  );
}

function Scalar({ field, value, onChange, id }: Props & { id: string }) {
  switch (field.kind) {
    case "boolean":
      return (
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.target.checked)}
        />
      );
    case "number":
      return (
        <input
          id={id}
          type="number"
          step={field.integer ? 1 : "any"}
          value={typeof value === "number" ? value : ""}
          onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
        />
      );
    case "enum":
      return (
        <select
          id={id}
          value={JSON.stringify(value ?? null)}
          onChange={(e) => onChange(JSON.parse(e.target.value))}
        >
          {field.options.map((o) => (
            <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
              {String(o)}
            </option>
          ))}
        </select>
      );
    case "string":
      return (
        <input id={id} type="text" value={String(value ?? "")} onChange={(e) => onChange(e.target.value)} />
      );
    default:
      return <JsonText id={id} value={value} onChange={onChange} />;
  }
}

/** A value the form cannot shape: typed as JSON, kept as text until it parses. */
function JsonText({ id, value, onChange }: { id: string; value: unknown; onChange: (v: unknown) => void }) {
  return (
    <textarea
      id={id}
      rows={3}
      spellCheck={false}
      defaultValue={value === undefined ? "" : JSON.stringify(value, null, 2)}
      onChange={(e) => {
        try {
          onChange(e.target.value.trim() ? JSON.parse(e.target.value) : undefined);
        } catch {}
      }}
    />
  );
}

function ObjectFields({ properties, value, onChange, label, root }: Props & { properties: Property[] }) {
  const v = (value ?? {}) as Record<string, unknown>;
  const fields = (
    <>
      {properties.length === 0 && <p className="muted">No fields.</p>}
      {properties.map((p) => (
        <FieldInput
          key={p.name}
          field={p.field}
          label={`${p.title}${p.required ? " *" : ""}`}
          description={p.description}
          value={v[p.name]}
          onChange={(x) => onChange({ ...v, [p.name]: x })}
        />
      ))}
    </>
  );
  if (root) return <div className="sf-root">{fields}</div>;
  return (
    <fieldset className="sf-object">
      <legend>{label}</legend>
      {fields}
    </fieldset>
  );
}

function ArrayField({ items, value, onChange, label }: Props & { items: Field }) {
  const list = Array.isArray(value) ? value : [];
  return (
    <fieldset className="sf-array">
      <legend>{label}</legend>
      {list.map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: an array item has no identity but its place
        <div key={i} className="sf-item">
          <FieldInput
            field={items}
            label={`${label} ${i + 1}`}
            value={item}
            onChange={(x) => onChange(list.map((old, j) => (j === i ? x : old)))}
          />
          <button type="button" className="link" onClick={() => onChange(list.filter((_, j) => j !== i))}>
            Remove {label} {i + 1}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...list, emptyValue(items)])}>
        Add to {label}
      </button>
    </fieldset>
  );
}

function MessagesField({ value, onChange, label }: Props) {
  const list = (Array.isArray(value) ? value : []) as FormMessage[];
  const shown = list.length ? list : [{ role: "user" as const, content: "" }];
  const set = (i: number, m: Partial<FormMessage>) =>
    onChange(shown.map((old, j) => (j === i ? { ...old, ...m } : old)));
  return (
    <fieldset className="sf-messages">
      <legend>{label}</legend>
      {shown.map((m, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a message being typed has no id yet
        <div key={i} className="sf-message">
          <select
            aria-label={`Message ${i + 1} role`}
            value={m.role}
            onChange={(e) => set(i, { role: e.target.value as FormMessage["role"] })}
          >
            <option value="user">user</option>
            <option value="assistant">assistant</option>
            <option value="system">system</option>
          </select>
          <textarea
            aria-label={`Message ${i + 1}`}
            rows={2}
            value={m.content}
            onChange={(e) => set(i, { content: e.target.value })}
          />
          {shown.length > 1 && (
            <button
              type="button"
              className="link sf-remove"
              onClick={() => onChange(shown.filter((_, j) => j !== i))}
            >
              Remove message {i + 1}
            </button>
          )}
        </div>
      ))}
      <button type="button" onClick={() => onChange([...shown, { role: "user", content: "" }])}>
        Add message
      </button>
    </fieldset>
  );
}
