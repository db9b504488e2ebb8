import type { Assistant } from "../wire.ts";

/** An assistant by its name, with its graph when the name is not the graph's. */
export const assistantLabel = (a: Pick<Assistant, "name" | "graph_id">) =>
  a.name && a.name !== a.graph_id ? `${a.name} (${a.graph_id})` : a.graph_id;

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
