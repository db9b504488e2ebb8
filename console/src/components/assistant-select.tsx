import { assistantLabel } from "../format.ts";
import type { Assistant } from "../wire.ts";

/** The choice of a deployment's assistant ("Loading…" until they are read); the caller labels it. */
export function AssistantSelect(props: {
  id?: string;
  assistants: Assistant[] | undefined;
  value: string | undefined;
  onChange: (assistantId: string) => void;
}) {
  return (
    <select id={props.id} value={props.value ?? ""} onChange={(e) => props.onChange(e.target.value)}>
      {!props.assistants && <option value="">Loading…</option>}
      {props.assistants?.map((a) => (
        <option key={a.assistant_id} value={a.assistant_id}>
          {assistantLabel(a)}
        </option>
      ))}
    </select>
  );
}
