import {
  type ContentBlock,
  ContentBlockSchema,
  formatIssues,
  type MediaType,
  type Message,
} from "./format.ts";
import { arr, describe, isRecord, type Json, pathString, rec, str } from "./json.ts";

/** A converted content part: a platform block, or a tool result that must become its own message. */
export type Part = { block: ContentBlock } | { toolMessage: Message };
type Path = (string | number)[];

/** Converts any known content encoding (string, platform, OpenAI, Anthropic, LangChain parts) to parts. */
export function convertContent(content: unknown, path: Path, errors: string[]): Part[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ block: { type: "text", text: content } }];
  // A lone block object is read as a one-block list.
  const list = isRecord(content) ? [content] : content;
  if (!Array.isArray(list)) {
    errors.push(`${pathString(path)}: expected string or array of content blocks, got ${describe(content)}`);
    return [];
  }
  const parts: Part[] = [];
  list.forEach((raw, i) => {
    const part = convertPart(raw, [...path, i], errors);
    if (part) parts.push(part);
  });
  return parts;
}

/** Content without splitting: used where a nested tool result makes no sense (tool outputs). */
export function convertBlocks(content: unknown, path: Path, errors: string[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  convertContent(content, path, errors).forEach((part) => {
    if ("block" in part) blocks.push(part.block);
    else errors.push(`${pathString(path)}: nested tool_result is not supported`);
  });
  return blocks;
}

function convertPart(raw: unknown, path: Path, errors: string[]): Part | null {
  if (typeof raw === "string") return { block: { type: "text", text: raw } };
  if (!isRecord(raw)) {
    errors.push(`${pathString(path)}: expected content block object, got ${describe(raw)}`);
    return null;
  }
  const type = str(raw.type);
  if (type === "tool_result") return { toolMessage: toolResultMessage(raw, path, errors) };
  const candidate = type === undefined ? undefined : toBlock(type, raw, path, errors);
  if (candidate === undefined) {
    errors.push(`${pathString(path)}: unsupported content block type ${JSON.stringify(type ?? null)}`);
    return null;
  }
  if (candidate === null) return null;
  const parsed = ContentBlockSchema.safeParse(compact(candidate));
  if (!parsed.success) {
    errors.push(...formatIssues(parsed.error.issues, path));
    return null;
  }
  return { block: parsed.data };
}

// undefined = unknown type, null = known but already reported as unusable.
function toBlock(type: string, p: Json, path: Path, errors: string[]): Json | null | undefined {
  switch (type) {
    case "text":
    case "input_text":
    case "output_text":
      return textBlock(p);
    case "reasoning":
      if (typeof p.text === "string") return p;
      return {
        type,
        text: summaryText(p.summary),
        extras: typeof p.id === "string" ? { id: p.id } : undefined,
      };
    case "thinking":
      return { type: "reasoning", text: p.thinking, extras: signature(p) };
    case "redacted_thinking":
      return { type: "reasoning", text: "", extras: { redacted: true, data: p.data } };
    case "image_url":
      return media("image", typeof p.image_url === "string" ? p.image_url : rec(p.image_url)?.url);
    case "input_image":
      return { ...media("image", p.image_url), ...(typeof p.file_id === "string" ? { id: p.file_id } : {}) };
    case "input_audio": {
      const audio = rec(p.input_audio) ?? {};
      const format = str(audio.format);
      return { type: "audio", base64: audio.data, ...(format ? { mime_type: `audio/${format}` } : {}) };
    }
    case "image":
    case "file":
    case "audio":
    case "video":
    case "document":
      return mediaBlock(type === "document" ? "file" : type, p, path, errors);
    case "tool_call":
    case "server_tool_call":
    case "server_tool_result":
      return p;
    case "tool_use":
      return {
        type: "tool_call",
        id: p.id,
        name: p.name,
        args: parseArgs(p.input, [...path, "input"], errors),
      };
  }
  if (type.endsWith("_tool_use")) {
    const args = parseArgs(p.input, [...path, "input"], errors);
    const server = typeof p.server_name === "string" ? { server_name: p.server_name } : {};
    return { type: "server_tool_call", id: p.id, name: p.name ?? type, args, ...server };
  }
  if (type.endsWith("_tool_result")) {
    const failed = p.is_error === true || /_error$/.test(str(rec(p.content)?.type) ?? "");
    return {
      type: "server_tool_result",
      tool_call_id: p.tool_use_id,
      status: failed ? "error" : "success",
      output: p.content,
    };
  }
  return undefined;
}

// Converters set optional keys unconditionally; drop the absent ones so outputs stay clean JSON.
function compact(block: Json): Json {
  return Object.fromEntries(Object.entries(block).filter(([, v]) => v !== undefined));
}

function textBlock(p: Json): Json {
  const block: Json = { ...p, type: "text" };
  // Anthropic calls its annotations "citations".
  if (block.annotations === undefined && Array.isArray(p.citations)) {
    block.annotations = p.citations.filter(isRecord);
  }
  return block;
}

function summaryText(summary: unknown): string | undefined {
  const items = arr(summary);
  if (!items) return undefined;
  return items.map((s) => str(rec(s)?.text) ?? "").join("\n\n");
}

function signature(p: Json): Json | undefined {
  return typeof p.signature === "string" ? { signature: p.signature } : undefined;
}

// data: URLs carry the payload inline; splitting them out keeps url for real locations only.
function media(type: MediaType, url: unknown): Json {
  if (typeof url !== "string") return { type };
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,/.exec(url);
  if (!match) return { type, url };
  return { type, base64: url.slice(match[0].length), ...(match[1] ? { mime_type: match[1] } : {}) };
}

function mediaBlock(type: MediaType, p: Json, path: Path, errors: string[]): Json | null {
  const source = rec(p.source);
  if (source) return anthropicSource(type, source, [...path, "source"], errors);
  const file = rec(p.file);
  if (file) {
    // OpenAI chat "file" part: inline data (often a data: URL) or an uploaded file id.
    const out: Json = typeof file.file_data === "string" ? media(type, file.file_data) : { type };
    if (out.url !== undefined) {
      out.base64 = out.url;
      delete out.url;
    }
    if (typeof file.file_id === "string") out.id = file.file_id;
    if (typeof file.filename === "string") out.filename = file.filename;
    return out;
  }
  const sourceType = str(p.source_type);
  if (sourceType !== undefined) {
    // LangChain v0 multimodal blocks.
    const mime = typeof p.mime_type === "string" ? { mime_type: p.mime_type } : {};
    if (sourceType === "base64") return { type, base64: p.data, ...mime };
    if (sourceType === "url") return { ...media(type, p.url), ...mime };
    if (sourceType === "id") return { type, id: p.id, ...mime };
    if (sourceType === "text") return { type: "text", text: p.text };
    errors.push(
      `${pathString([...path, "source_type"])}: unsupported source_type ${JSON.stringify(sourceType)}`,
    );
    return null;
  }
  return { ...p, type };
}

function anthropicSource(type: MediaType, source: Json, path: Path, errors: string[]): Json | null {
  const mime = typeof source.media_type === "string" ? { mime_type: source.media_type } : {};
  switch (source.type) {
    case "base64":
      return { type, base64: source.data, ...mime };
    case "url":
      return { type, url: source.url, ...mime };
    case "file":
      return { type, id: source.file_id, ...mime };
    case "text":
      // Plain-text documents: keep them as a file so the block kind survives the conversion.
      if (typeof source.data !== "string") break;
      return { type, base64: Buffer.from(source.data).toString("base64"), mime_type: "text/plain", ...mime };
  }
  errors.push(
    `${pathString([...path, "type"])}: unsupported source type ${JSON.stringify(source.type ?? null)}`,
  );
  return null;
}

/** Tool-call arguments arrive as objects or JSON strings; anything else becomes {} and an error. */
export function parseArgs(raw: unknown, path: Path, errors: string[]): Json {
  if (isRecord(raw)) return raw;
  if (raw === undefined || raw === null || raw === "") return {};
  if (typeof raw === "string") {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isRecord(parsed)) return parsed;
    } catch {
      // reported below
    }
    errors.push(`${pathString(path)}: tool call arguments are not a JSON object`);
    return {};
  }
  errors.push(`${pathString(path)}: tool call arguments must be an object, got ${describe(raw)}`);
  return {};
}

function toolResultMessage(p: Json, path: Path, errors: string[]): Message {
  const message: Message = { role: "tool", content: convertBlocks(p.content, [...path, "content"], errors) };
  if (typeof p.tool_use_id === "string") message.tool_call_id = p.tool_use_id;
  else errors.push(`${pathString([...path, "tool_use_id"])}: is required`);
  if (p.is_error === true) message.status = "error";
  return message;
}
