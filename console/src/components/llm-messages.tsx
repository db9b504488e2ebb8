import type { ReactNode } from "react";
import { pretty } from "../format.ts";

// An llm run's messages in the platform format (shared/llm/format.ts): roles, text, reasoning, tool calls with
// their arguments beside their results, media blocks and server tool calls. Everything is React text; media
// load only from base64 data (as a data: URL); an http(s) URL is a link, anything else is shown as a reference.
type Json = Record<string, unknown>;
interface Block extends Json {
  type: string;
}
interface Message extends Json {
  role: string;
  content: Block[];
  tool_call_id?: string;
  name?: string;
  status?: string;
}

const asMessages = (list: unknown[]): Message[] =>
  list.filter(
    (m): m is Message =>
      !!m &&
      typeof m === "object" &&
      typeof (m as Json).role === "string" &&
      Array.isArray((m as Json).content),
  );
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

export function LlmMessages({ input, output }: { input: unknown[]; output: unknown[] }) {
  const inputs = asMessages(input ?? []);
  const outputs = asMessages(output ?? []);
  const all = [...inputs, ...outputs];
  // Tool results by the call they answer, so each shows beside its call.
  const results = new Map<string, Message>();
  for (const m of all) if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  const serverResults = new Map<string, Block>();
  for (const m of all)
    for (const b of m.content)
      if (b.type === "server_tool_result" && str(b.tool_call_id)) serverResults.set(str(b.tool_call_id)!, b);
  const called = new Set<string>();
  const serverCalled = new Set<string>();
  for (const m of all)
    for (const b of m.content) {
      if (b.type === "tool_call" && str(b.id) && results.has(str(b.id)!)) called.add(str(b.id)!);
      if (b.type === "server_tool_call" && str(b.id)) serverCalled.add(str(b.id)!);
    }
  const ctx: Ctx = { results, serverResults, called, serverCalled };
  return (
    <section className="llm-messages" aria-labelledby="messages-h">
      <h3 id="messages-h">Messages</h3>
      <MessageList title="Input" messages={inputs} ctx={ctx} />
      <MessageList title="Output" messages={outputs} ctx={ctx} />
    </section>
  );
}

interface Ctx {
  results: Map<string, Message>;
  serverResults: Map<string, Block>;
  called: Set<string>;
  serverCalled: Set<string>;
}

function MessageList({ title, messages, ctx }: { title: string; messages: Message[]; ctx: Ctx }) {
  // A tool result shown beside its call is not repeated on its own.
  const shown = messages.filter(
    (m) => !(m.role === "tool" && m.tool_call_id && ctx.called.has(m.tool_call_id)),
  );
  return (
    <>
      <h4>{`${title} messages`}</h4>
      {shown.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ol className="messages" aria-label={`${title} messages`}>
          {shown.map((m, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: messages have no stable id; the list never reorders
            <li key={i}>
              <article className={`message role-${m.role}`} aria-label={`${m.role} message`}>
                <header>
                  <span className="role">{m.role}</span>
                  {m.name && <span className="muted">{` ${m.name}`}</span>}
                  {m.tool_call_id && <span className="muted">{` result of call ${m.tool_call_id}`}</span>}
                  {m.status === "error" && <span className="status-error"> error</span>}
                </header>
                <Blocks blocks={m.content} ctx={ctx} />
              </article>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

function Blocks({ blocks, ctx }: { blocks: Block[]; ctx: Ctx }) {
  return (
    <>
      {blocks.map((b, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: blocks have no stable id; the list never reorders
        <BlockView key={i} block={b} ctx={ctx} />
      ))}
    </>
  );
}

function BlockView({ block: b, ctx }: { block: Block; ctx: Ctx }): ReactNode {
  switch (b.type) {
    case "text":
      return <p className="text">{str(b.text) ?? ""}</p>;
    case "reasoning":
      return (
        <details className="reasoning">
          <summary>Reasoning</summary>
          <p className="text">{str(b.text) || "(redacted)"}</p>
        </details>
      );
    case "image":
    case "audio":
    case "video":
    case "file":
      return <Media block={b} />;
    case "tool_call": {
      const id = str(b.id);
      const result = id ? ctx.results.get(id) : undefined;
      return (
        <ToolCall kind="Tool call" name={str(b.name) ?? "(unnamed)"} id={id} args={b.args}>
          {result ? (
            <>
              {result.status === "error" && <p className="status-error">error</p>}
              <Blocks blocks={result.content} ctx={ctx} />
            </>
          ) : (
            <p className="muted">No result in this run.</p>
          )}
        </ToolCall>
      );
    }
    case "server_tool_call": {
      const id = str(b.id);
      const result = id ? ctx.serverResults.get(id) : undefined;
      return (
        <ToolCall kind="Server tool call" name={str(b.name) ?? "(unnamed)"} id={id} args={b.args}>
          {result ? <ServerResult block={result} /> : <p className="muted">No result in this run.</p>}
        </ToolCall>
      );
    }
    case "server_tool_result":
      if (str(b.tool_call_id) && ctx.serverCalled.has(str(b.tool_call_id)!)) return null;
      return (
        <section className="tool-call" aria-label="Server tool result">
          <ServerResult block={b} />
        </section>
      );
    default:
      return <pre>{pretty(b)}</pre>;
  }
}

function ToolCall(props: { kind: string; name: string; id?: string; args: unknown; children: ReactNode }) {
  return (
    <section className="tool-call" aria-label={`${props.kind} ${props.name}`}>
      <div className="tool-head">
        <strong>{`${props.kind}: ${props.name}`}</strong>
        {props.id && <span className="muted">{` (${props.id})`}</span>}
      </div>
      <div className="tool-sides">
        <div className="tool-args">
          <h5>Arguments</h5>
          <pre>{pretty(props.args ?? {})}</pre>
        </div>
        <div className="tool-result">
          <h5>Result</h5>
          {props.children}
        </div>
      </div>
    </section>
  );
}

function ServerResult({ block }: { block: Block }) {
  return (
    <>
      <p className={`status-${block.status === "error" ? "error" : "success"}`}>{str(block.status) ?? "—"}</p>
      {block.output !== undefined && <pre>{pretty(block.output)}</pre>}
    </>
  );
}

const MIME = /^[a-z]+\/[\w.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/_=\s-]+$/;
const DEFAULT_MIME: Record<string, string> = {
  image: "image/png",
  audio: "audio/mpeg",
  video: "video/mp4",
  file: "application/octet-stream",
};

/** Where a media block can load from: an http(s) URL or its base64 data as a data: URL; else undefined. */
export function mediaSrc(b: Block): string | undefined {
  const url = str(b.url);
  if (url && /^https?:\/\//i.test(url)) return url;
  if (url && /^data:[a-z]+\/[\w.+-]+(;[\w=.-]+)*;base64,[A-Za-z0-9+/=]*$/i.test(url)) return url;
  const data = str(b.base64);
  if (data && BASE64.test(data)) {
    const mime = str(b.mime_type);
    return `data:${mime && MIME.test(mime) ? mime : DEFAULT_MIME[b.type]};base64,${data.replace(/\s/g, "")}`;
  }
  return undefined;
}

function Media({ block: b }: { block: Block }) {
  const src = mediaSrc(b);
  // Only inline data is loaded: a remote URL is a link (the console's CSP loads nothing from other hosts).
  const inline = src?.startsWith("data:") ? src : undefined;
  const mime = str(b.mime_type);
  const name = str(b.filename) ?? str(b.name);
  const label = [b.type, name, mime].filter(Boolean).join(" · ");
  const ref = (
    <span className="muted">
      {[
        str(b.url) && !src ? `URL not shown: ${str(b.url)}` : undefined,
        str(b.id) ? `id ${str(b.id)}` : undefined,
        str(b.base64)
          ? `${Math.round((str(b.base64)!.length * 3) / 4).toLocaleString("en-US")} bytes inline`
          : undefined,
      ]
        .filter(Boolean)
        .join(" · ")}
    </span>
  );
  if (inline && b.type === "image")
    return (
      <figure className="media">
        <img src={inline} alt={name ?? "Image from the message"} />
        <figcaption>{label}</figcaption>
      </figure>
    );
  if (inline && b.type === "audio")
    return (
      <figure className="media">
        {/* biome-ignore lint/a11y/useMediaCaption: model audio comes without captions */}
        <audio controls src={inline} aria-label={name ?? "Audio from the message"} />
        <figcaption>{label}</figcaption>
      </figure>
    );
  if (inline && b.type === "video")
    return (
      <figure className="media">
        {/* biome-ignore lint/a11y/useMediaCaption: model video comes without captions */}
        <video controls src={inline} aria-label={name ?? "Video from the message"} />
        <figcaption>{label}</figcaption>
      </figure>
    );
  return (
    <section className="media media-ref" aria-label={`${b.type} reference`}>
      <strong>{label}</strong>{" "}
      {src && /^https?:/i.test(src) ? (
        <a href={src} target="_blank" rel="noopener noreferrer">
          open
        </a>
      ) : null}{" "}
      {ref}
    </section>
  );
}
