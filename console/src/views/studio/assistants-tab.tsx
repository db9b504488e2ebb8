import { useEffect, useState } from "react";
import type { AgentServer } from "../../agent-api.ts";
import { JsonEditor } from "../../components/json-editor.tsx";
import { useAction } from "../../hooks.ts";
import type { Assistant } from "../../wire.ts";
import { ListTable } from "./list-table.tsx";
import { parseJson } from "./schema-form.ts";

// Assistants of a deployment: created for a graph, edited (name, config, context, metadata — each edit a new
// version), their versions listed with one made active, deleted.

const pretty = (v: unknown) => JSON.stringify(v ?? {}, null, 2);
/** The assistant's JSON fields the form edits, with their labels. */
const JSON_FIELDS = [
  ["config", "Config"],
  ["context", "Context"],
  ["metadata", "Metadata"],
] as const;
type JsonField = (typeof JSON_FIELDS)[number][0];

function AssistantForm({
  graphs,
  start,
  onSave,
  onCancel,
}: {
  graphs: string[];
  start?: Assistant;
  onSave: (body: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
}) {
  const [graphId, setGraphId] = useState(start?.graph_id ?? graphs[0] ?? "");
  const [name, setName] = useState(start?.name ?? "");
  const [texts, setTexts] = useState(
    Object.fromEntries(JSON_FIELDS.map(([f]) => [f, pretty(start?.[f])])) as Record<JsonField, string>,
  );
  const parsed = Object.fromEntries(JSON_FIELDS.map(([f]) => [f, parseJson(texts[f])])) as Record<
    JsonField,
    ReturnType<typeof parseJson>
  >;
  const bad = Object.values(parsed).some((p) => p.error);
  return (
    <form
      className="as-form"
      aria-label={start ? `Edit assistant ${start.name ?? start.assistant_id}` : "New assistant"}
      onSubmit={(e) => {
        e.preventDefault();
        if (bad) return;
        void onSave({
          ...(start ? {} : { graph_id: graphId }),
          ...(name ? { name } : {}),
          config: parsed.config.value ?? {},
          context: parsed.context.value ?? {},
          metadata: parsed.metadata.value ?? {},
        });
      }}
    >
      {!start && (
        <label>
          Graph
          <select value={graphId} onChange={(e) => setGraphId(e.target.value)}>
            {graphs.map((g) => (
              <option key={g}>{g}</option>
            ))}
          </select>
        </label>
      )}
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      {JSON_FIELDS.map(([f, label]) => (
        <JsonEditor
          key={f}
          label={label}
          value={texts[f]}
          onChange={(text) => setTexts((t) => ({ ...t, [f]: text }))}
          problems={parsed[f].error ? [parsed[f].error] : []}
          rows={3}
        />
      ))}
      <div className="cp-actions">
        <button type="submit" className="primary" disabled={bad}>
          {start ? "Save a new version" : "Create assistant"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Versions({
  server,
  assistant,
  onChanged,
}: {
  server: AgentServer;
  assistant: Assistant;
  onChanged: () => void;
}) {
  const [versions, setVersions] = useState<Assistant[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    server.versions(assistant.assistant_id).then(setVersions, (e) => setError(e.message));
  }, [server, assistant]);
  return (
    <section aria-label={`Versions of ${assistant.name ?? assistant.assistant_id}`}>
      <h3>Versions</h3>
      {error && <p role="alert">{error}</p>}
      <ul className="as-versions">
        {versions?.map((v) => (
          <li key={v.version}>
            Version {v.version} · {v.name} {v.version === assistant.version && <strong>(active)</strong>}
            {v.version !== assistant.version && (
              <button
                type="button"
                className="link"
                onClick={() =>
                  server
                    .setLatest(assistant.assistant_id, v.version!)
                    .then(onChanged, (e) => setError(e.message))
                }
              >
                Make version {v.version} active
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function AssistantsTab({
  server,
  assistants,
  onChanged,
  onOpen,
}: {
  server: AgentServer;
  assistants: Assistant[];
  onChanged: () => void;
  onOpen: (assistantId: string) => void;
}) {
  const [editing, setEditing] = useState<Assistant | "new">();
  const [versionsOf, setVersionsOf] = useState<string>();
  const graphs = [...new Set(assistants.map((a) => a.graph_id))];
  const { error, act } = useAction(() => {
    setEditing(undefined);
    onChanged();
  });
  const shownVersions = assistants.find((a) => a.assistant_id === versionsOf);
  return (
    <section className="card" aria-label="Assistants">
      <div className="sg-head">
        <h2>Assistants</h2>
        <button type="button" onClick={() => setEditing("new")}>
          New assistant
        </button>
      </div>
      {error && <p role="alert">{error}</p>}
      {editing && (
        <AssistantForm
          key={editing === "new" ? "new" : `${editing.assistant_id}@${editing.version}`}
          graphs={graphs}
          start={editing === "new" ? undefined : editing}
          onCancel={() => setEditing(undefined)}
          onSave={(body) =>
            act(
              editing === "new"
                ? server.createAssistant(body)
                : server.updateAssistant(editing.assistant_id, body),
            )
          }
        />
      )}
      <ListTable caption="Assistants of this deployment" columns={["Name", "Graph", "Version", "Actions"]}>
        {assistants.map((a) => (
          <tr key={a.assistant_id}>
            <th scope="row">
              <button type="button" className="link" onClick={() => onOpen(a.assistant_id)}>
                {a.name ?? a.assistant_id}
              </button>
            </th>
            <td>{a.graph_id}</td>
            <td>{a.version ?? "—"}</td>
            <td className="as-actions">
              <button
                type="button"
                className="link"
                onClick={() => setEditing(a)}
                aria-label={`Edit ${a.name}`}
              >
                Edit
              </button>
              <button
                type="button"
                className="link"
                aria-label={`Versions of ${a.name}`}
                onClick={() => setVersionsOf(versionsOf === a.assistant_id ? undefined : a.assistant_id)}
              >
                Versions
              </button>
              {a.metadata?.created_by !== "system" && (
                <button
                  type="button"
                  className="link"
                  aria-label={`Delete ${a.name}`}
                  onClick={() => {
                    if (window.confirm(`Delete assistant ${a.name ?? a.assistant_id}?`))
                      void act(server.deleteAssistant(a.assistant_id));
                  }}
                >
                  Delete
                </button>
              )}
            </td>
          </tr>
        ))}
      </ListTable>
      {shownVersions && (
        <Versions
          key={`${shownVersions.assistant_id}@${shownVersions.version}`}
          server={server}
          assistant={shownVersions}
          onChanged={onChanged}
        />
      )}
    </section>
  );
}
