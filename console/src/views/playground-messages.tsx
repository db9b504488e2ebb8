import type { Message } from "../wire.ts";

// A thread's messages as a role=log list: who said it, its text, an AI message's tool calls (name + args)
// with their results beside them; tool messages no call here claims are shown on their own.
const ROLES: Record<string, string> = {
  human: "You",
  user: "You",
  ai: "Assistant",
  tool: "Tool",
  system: "System",
};

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((b) => (typeof b === "string" ? b : b?.type === "text" ? String(b.text ?? "") : ""))
      .join("");
  return content == null ? "" : JSON.stringify(content);
}

export function MessageList({
  messages,
  label,
  streaming,
}: {
  messages: Message[];
  label: string;
  streaming?: boolean;
}) {
  const results = new Map(messages.filter((m) => m.type === "tool").map((m) => [m.tool_call_id, m]));
  const claimed = new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  return (
    <ol
      className="pg-log"
      role="log"
      aria-label={label}
      aria-live="polite"
      aria-busy={streaming || undefined}
    >
      {messages.length === 0 && <li className="muted">No messages yet.</li>}
      {messages.map((m, i) =>
        m.type === "tool" && claimed.has(m.tool_call_id) ? null : (
          <li key={m.id ?? i} className={`pg-msg pg-${m.type}`}>
            <span className="pg-who">
              {Object.hasOwn(ROLES, m.type) ? ROLES[m.type] : m.type}
              {m.type === "tool" && m.name ? ` · ${m.name}` : ""}
            </span>
            {textOf(m.content) && <div className="pg-text">{textOf(m.content)}</div>}
            {(m.tool_calls ?? []).map((c, j) => {
              const result = results.get(c.id);
              return (
                <section key={c.id ?? j} className="pg-tool" aria-label={`Tool call ${c.name}`}>
                  <div>
                    <span className="pg-tag">tool call</span> <code>{c.name}</code>
                  </div>
                  <pre>{JSON.stringify(c.args)}</pre>
                  {result ? (
                    <div className={result.status === "error" ? "pg-result pg-error" : "pg-result"}>
                      <span className="pg-tag">result</span> {textOf(result.content)}
                    </div>
                  ) : (
                    <div className="muted">no result yet</div>
                  )}
                </section>
              );
            })}
          </li>
        ),
      )}
    </ol>
  );
}
