import { fmtCost, fmtDuration, fmtNumber, fmtTime, latencyMs, ms, pretty } from "../format.ts";
import { useApi } from "../hooks.ts";
import type { Feedback, Run } from "../wire.ts";
import { LlmMessages } from "./llm-messages.tsx";

// One run of a trace: its facts, an llm run's messages (or any run's inputs and outputs), its error, and its
// attachments, and its feedback (the summary the run carries and the list from /feedback).
export function RunDetail({ runId }: { runId: string }) {
  const { data: run, error } = useApi<Run>(`/api/v1/runs/${runId}`);
  if (error)
    return (
      <section className="run-detail card" aria-label="Run">
        <p role="alert">{error}</p>
      </section>
    );
  if (!run)
    return (
      <section className="run-detail card" aria-label="Run">
        <p role="status">Loading the run…</p>
      </section>
    );
  const latency = latencyMs(run);
  const ttft = run.first_token_time ? ms(run.first_token_time) - ms(run.start_time) : undefined;
  const isLlm = run.run_type === "llm";
  return (
    <section className="run-detail card" aria-labelledby="run-h">
      <h2 id="run-h">{run.name}</h2>
      <dl className="facts" aria-label="Run facts">
        <Fact name="Type" value={run.run_type} />
        <Fact name="Status" value={run.status} className={`status-${run.status}`} />
        <Fact name="Start (UTC)" value={fmtTime(run.start_time)} />
        <Fact name="Latency" value={fmtDuration(latency)} />
        {isLlm && (
          <>
            <Fact name="Prompt tokens" value={fmtNumber(run.prompt_tokens)} />
            <Fact name="Completion tokens" value={fmtNumber(run.completion_tokens)} />
            <Fact
              name="Total tokens"
              value={`${fmtNumber(run.total_tokens)}${run.tokens_estimated ? " (estimated)" : ""}`}
            />
            <Fact
              name="Cost"
              value={
                run.total_cost === null
                  ? "— (no price for the model)"
                  : `${fmtCost(run.total_cost)} (prompt ${fmtCost(run.prompt_cost)}, completion ${fmtCost(run.completion_cost)})`
              }
            />
            <Fact name="Time to first token" value={fmtDuration(ttft)} />
          </>
        )}
        {run.tags.length > 0 && <Fact name="Tags" value={run.tags.join(", ")} />}
      </dl>
      {run.error != null && (
        <section aria-labelledby="run-error-h">
          <h3 id="run-error-h">Error</h3>
          <pre className="status-error">{pretty(run.error)}</pre>
        </section>
      )}
      {isLlm && run.format_errors && run.format_errors.length > 0 && (
        <section className="format-errors" aria-labelledby="format-errors-h">
          <h3 id="format-errors-h">Format errors</h3>
          <p className="muted">The run's inputs or outputs did not conform to the message format:</p>
          <ul>
            {run.format_errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </section>
      )}
      {isLlm && run.messages ? (
        <LlmMessages input={run.messages.input_messages} output={run.messages.output_messages} />
      ) : (
        <>
          <section aria-labelledby="run-inputs-h">
            <h3 id="run-inputs-h">Inputs</h3>
            <pre>{pretty(run.inputs)}</pre>
          </section>
          <section aria-labelledby="run-outputs-h">
            <h3 id="run-outputs-h">Outputs</h3>
            <pre>{pretty(run.outputs)}</pre>
          </section>
        </>
      )}
      <RunAttachments files={run.s3_urls} />
      <RunFeedback run={run} />
    </section>
  );
}

/** The files sent with the run: images shown, anything else a link (presigned, valid for an hour). */
function RunAttachments({ files }: { files: Run["s3_urls"] }) {
  const list = Object.entries(files ?? {}).filter(([key]) => key.startsWith("attachment."));
  if (!list.length) return null;
  return (
    <section aria-labelledby="attachments-h">
      <h3 id="attachments-h">Attachments</h3>
      <ul className="attachments">
        {list.map(([key, file]) => {
          const name = key.slice("attachment.".length);
          const safe = /^https?:\/\//.test(file.presigned_url);
          return (
            <li key={key}>
              {safe ? (
                <a href={file.presigned_url} target="_blank" rel="noreferrer noopener">
                  {name}
                </a>
              ) : (
                name
              )}{" "}
              <span className="muted">{file.mime_type}</span>
              {safe && file.mime_type.startsWith("image/") && (
                <div>
                  <img src={file.presigned_url} alt={`Attachment ${name}`} className="attachment-image" />
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Fact({ name, value, className }: { name: string; value: string; className?: string }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd className={className}>{value}</dd>
    </div>
  );
}

function RunFeedback({ run }: { run: Run }) {
  const { data, error } = useApi<Feedback[]>(`/api/v1/feedback?run=${run.id}`);
  const stats = Object.entries(run.feedback_stats ?? {});
  return (
    <section aria-labelledby="feedback-h">
      <h3 id="feedback-h">Feedback</h3>
      {stats.length > 0 && (
        <table aria-label="Feedback summary">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Count</th>
              <th scope="col">Average score</th>
              <th scope="col">Values</th>
            </tr>
          </thead>
          <tbody>
            {stats.map(([key, s]) => (
              <tr key={key}>
                <td>{key}</td>
                <td>{s.n}</td>
                <td>{s.avg ?? "—"}</td>
                <td>
                  {Object.entries(s.values ?? {})
                    .map(([v, n]) => `${v}: ${n}`)
                    .join(", ") || "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error && <p role="alert">{error}</p>}
      {data && !data.length && <p className="muted">No feedback on this run.</p>}
      {data && data.length > 0 && (
        <table aria-label="Feedback list">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Score</th>
              <th scope="col">Value</th>
              <th scope="col">Comment</th>
              <th scope="col" className="hide-narrow">
                Source
              </th>
              <th scope="col" className="hide-narrow">
                Created (UTC)
              </th>
            </tr>
          </thead>
          <tbody>
            {data.map((f) => (
              <tr key={f.id}>
                <td>{f.key}</td>
                <td>{f.score === null ? "—" : String(f.score)}</td>
                <td>{f.value === null || f.value === undefined ? "—" : pretty(f.value, 500)}</td>
                <td>{f.comment ?? "—"}</td>
                <td className="hide-narrow">
                  {typeof f.feedback_source?.type === "string" ? f.feedback_source.type : "—"}
                </td>
                <td className="hide-narrow">{fmtTime(f.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
