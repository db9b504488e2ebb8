import { useCallback, useEffect, useState } from "react";
import type { AgentServer } from "../../agent-api.ts";
import { JsonEditor } from "../../components/json-editor.tsx";
import { useAction } from "../../hooks.ts";
import type { Assistant, Cron } from "../../wire.ts";
import { ListTable } from "./list-table.tsx";
import { parseJson } from "./schema-form.ts";

// The deployment's crons: listed, created (an assistant, a cron schedule, an input), paused or resumed, deleted.

export function CronsTab({ server, assistants }: { server: AgentServer; assistants: Assistant[] }) {
  const [crons, setCrons] = useState<Cron[]>();
  const [assistantId, setAssistantId] = useState(assistants[0]?.assistant_id ?? "");
  const [schedule, setSchedule] = useState("0 * * * *");
  const [input, setInput] = useState("{}");
  const parsed = parseJson(input);
  const load = useCallback(() => server.crons().then(setCrons), [server]);
  const { error, setError, act } = useAction(load);
  useEffect(() => void load().catch((e) => setError(e.message)), [load, setError]);
  const nameOf = (id: string) => assistants.find((a) => a.assistant_id === id)?.name ?? id.slice(0, 8);
  return (
    <section className="card" aria-label="Crons">
      <h2>Crons</h2>
      {error && <p role="alert">{error}</p>}
      <form
        className="studio-search"
        aria-label="New cron"
        onSubmit={(e) => {
          e.preventDefault();
          if (!parsed.error)
            void act(server.createCron({ assistant_id: assistantId, schedule, input: parsed.value ?? {} }));
        }}
      >
        <label>
          Assistant
          <select value={assistantId} onChange={(e) => setAssistantId(e.target.value)}>
            {assistants.map((a) => (
              <option key={a.assistant_id} value={a.assistant_id}>
                {a.name ?? a.graph_id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Schedule (cron, UTC)
          <input value={schedule} onChange={(e) => setSchedule(e.target.value)} />
        </label>
        <JsonEditor
          label="Cron input"
          value={input}
          onChange={setInput}
          problems={parsed.error ? [parsed.error] : []}
          rows={3}
        />
        <button type="submit" className="primary" disabled={!!parsed.error || !assistantId}>
          Create cron
        </button>
      </form>
      {crons?.length === 0 && <p className="muted">No crons.</p>}
      <ListTable
        caption="Crons of this deployment"
        columns={["Schedule", "Assistant", "Next run", "State", "Actions"]}
      >
        {crons?.map((c) => (
          <tr key={c.cron_id}>
            <th scope="row">
              <code>{c.schedule}</code>
            </th>
            <td>{nameOf(c.assistant_id)}</td>
            <td>{c.next_run_date ? new Date(c.next_run_date).toLocaleString() : "—"}</td>
            <td>{c.enabled === false ? "paused" : "active"}</td>
            <td className="as-actions">
              <button
                type="button"
                className="link"
                onClick={() => void act(server.updateCron(c.cron_id, { enabled: c.enabled === false }))}
              >
                {c.enabled === false ? "Resume" : "Pause"} cron {c.schedule}
              </button>
              <button type="button" className="link" onClick={() => void act(server.deleteCron(c.cron_id))}>
                Delete cron {c.schedule}
              </button>
            </td>
          </tr>
        ))}
      </ListTable>
    </section>
  );
}
