import { describe, expect, it } from "vitest";
import { normalizeLlmIO } from "./normalize.ts";

const lc = (cls: string, kwargs: Record<string, unknown>) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", cls],
  kwargs,
});
const text = (t: string) => ({ type: "text", text: t });

describe("normalizeLlmIO", () => {
  it("platform format passes through, string content becomes a text block", () => {
    const out = normalizeLlmIO(
      {
        messages: [
          { role: "user", content: "hi" },
          { role: "system", content: [text("s")], note: 1 },
        ],
      },
      { messages: [{ role: "assistant", content: [text("yo")] }] },
    );
    expect(out.input_messages).toEqual([
      { role: "user", content: [text("hi")] },
      { role: "system", content: [text("s")], note: 1 },
    ]);
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("yo")] }]);
    expect(out.format_errors).toEqual([]);
  });

  it("OpenAI chat completions with tool calls, roles and multimodal parts", () => {
    const inputs = {
      model: "gpt-4o",
      messages: [
        { role: "developer", content: "rules" },
        {
          role: "user",
          content: [
            text("look"),
            { type: "image_url", image_url: { url: "https://img/x.png" } },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
            { type: "file", file: { file_id: "file-1", filename: "a.pdf" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get", arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "rainy" },
        { role: "function", name: "legacy", content: "ok" },
      ],
    };
    const outputs = {
      choices: [{ message: { role: "assistant", content: "Rainy.", reasoning_content: "checked" } }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
      model: "gpt-4o",
    };
    const out = normalizeLlmIO(inputs, outputs);
    expect(out.format_errors).toEqual([]);
    expect(out.input_messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(out.input_messages[1].content).toEqual([
      text("look"),
      { type: "image", url: "https://img/x.png" },
      { type: "image", base64: "AAAA", mime_type: "image/png" },
      { type: "audio", base64: "UklG", mime_type: "audio/wav" },
      { type: "file", id: "file-1", filename: "a.pdf" },
    ]);
    expect(out.input_messages[2].content).toEqual([
      { type: "tool_call", id: "call_1", name: "get", args: { city: "Oslo" } },
    ]);
    expect(out.input_messages[3]).toMatchObject({ tool_call_id: "call_1", content: [text("rainy")] });
    expect(out.output_messages).toEqual([
      { role: "assistant", content: [{ type: "reasoning", text: "checked" }, text("Rainy.")] },
    ]);
  });

  it("OpenAI unparseable tool call arguments become {} plus a format error", () => {
    const out = normalizeLlmIO(
      {
        messages: [
          {
            role: "assistant",
            tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{x" } }],
          },
        ],
      },
      undefined,
    );
    expect(out.input_messages[0].content).toEqual([{ type: "tool_call", id: "c", name: "f", args: {} }]);
    expect(out.format_errors).toEqual([
      "inputs.messages[0].tool_calls[0].function.arguments: tool call arguments are not a JSON object",
    ]);
  });

  it("Anthropic messages with system, thinking, tool_use and tool_result", () => {
    const inputs = {
      system: [text("sys")],
      messages: [
        {
          role: "user",
          content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j" } }],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "plan", signature: "sig" },
            { type: "tool_use", id: "toolu_1", name: "search", input: { q: "x" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [text("found")], is_error: true },
            text("thanks"),
            { type: "document", source: { type: "url", url: "https://d/x.pdf" } },
          ],
        },
      ],
    };
    const outputs = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-20250514",
      content: [
        { type: "server_tool_use", id: "srv_1", name: "web_search", input: { query: "x" } },
        {
          type: "web_search_tool_result",
          tool_use_id: "srv_1",
          content: [{ type: "web_search_result", url: "u" }],
        },
        { type: "text", text: "done", citations: [{ type: "web_search_result_location", url: "u" }] },
      ],
      stop_reason: "end_turn",
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const out = normalizeLlmIO(inputs, outputs);
    expect(out.format_errors).toEqual([]);
    expect(out.input_messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(out.input_messages[1].content).toEqual([
      { type: "image", base64: "/9j", mime_type: "image/jpeg" },
    ]);
    expect(out.input_messages[2].content).toEqual([
      { type: "reasoning", text: "plan", extras: { signature: "sig" } },
      { type: "tool_call", id: "toolu_1", name: "search", args: { q: "x" } },
    ]);
    expect(out.input_messages[3]).toEqual({
      role: "tool",
      tool_call_id: "toolu_1",
      status: "error",
      content: [text("found")],
    });
    expect(out.input_messages[4].content).toEqual([text("thanks"), { type: "file", url: "https://d/x.pdf" }]);
    const [reply] = out.output_messages;
    expect(reply.id).toBe("msg_1");
    expect(reply.content[0]).toEqual({
      type: "server_tool_call",
      id: "srv_1",
      name: "web_search",
      args: { query: "x" },
    });
    expect(reply.content[1]).toMatchObject({
      type: "server_tool_result",
      tool_call_id: "srv_1",
      status: "success",
    });
    expect(reply.content[2]).toMatchObject({ type: "text", text: "done", annotations: [{ url: "u" }] });
  });

  it("LangChain serialized batch inputs and generations outputs", () => {
    const inputs = {
      messages: [
        [
          lc("SystemMessage", { content: "sys", additional_kwargs: {} }),
          lc("HumanMessage", { content: "weather?", additional_kwargs: {} }),
          lc("AIMessage", {
            content: "",
            tool_calls: [{ id: "t1", name: "weather", args: { c: "x" }, type: "tool_call" }],
          }),
          lc("ToolMessage", { content: "sunny", tool_call_id: "t1", name: "weather" }),
        ],
      ],
    };
    const usage = { input_tokens: 7, output_tokens: 2, total_tokens: 9 };
    const outputs = {
      generations: [
        [{ text: "Sunny", message: lc("AIMessageChunk", { content: "Sunny", usage_metadata: usage }) }],
      ],
      llm_output: null,
    };
    const out = normalizeLlmIO(inputs, outputs);
    expect(out.format_errors).toEqual([]);
    expect(out.input_messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(out.input_messages[2].content).toEqual([
      { type: "tool_call", id: "t1", name: "weather", args: { c: "x" } },
    ]);
    expect(out.input_messages[3]).toMatchObject({
      tool_call_id: "t1",
      name: "weather",
      content: [text("sunny")],
    });
    expect(out.output_messages).toEqual([
      { role: "assistant", content: [text("Sunny")], usage_metadata: usage },
    ]);
  });

  it("LangChain plain dict messages map human/ai types", () => {
    const out = normalizeLlmIO(
      {
        messages: [
          [
            { type: "human", content: "a" },
            { type: "ai", content: "b" },
          ],
        ],
      },
      { output: { type: "ai", content: "c" } },
    );
    expect(out.input_messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("c")] }]);
  });

  it("LangChain outputs as a messages list", () => {
    const out = normalizeLlmIO(undefined, { messages: [lc("AIMessage", { content: "x" })] });
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("x")] }]);
  });

  it("alternative output shape: choices[].message", () => {
    const out = normalizeLlmIO([], { choices: [{ message: { role: "assistant", content: "a" } }] });
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("a")] }]);
  });

  it("alternative output shape: { message }", () => {
    const out = normalizeLlmIO([], { message: { role: "assistant", content: "b" } });
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("b")] }]);
  });

  it("alternative output shape: a bare { role, content }", () => {
    const out = normalizeLlmIO([], { role: "assistant", content: "c" });
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("c")] }]);
  });

  it("alternative output shape: a [role, content] pair", () => {
    const out = normalizeLlmIO([], ["assistant", "d"]);
    expect(out.output_messages).toEqual([{ role: "assistant", content: [text("d")] }]);
  });

  it("inputs may be a plain array of { role, content }", () => {
    const out = normalizeLlmIO([{ role: "user", content: "q" }], undefined);
    expect(out.input_messages).toEqual([{ role: "user", content: [text("q")] }]);
    expect(out.format_errors).toEqual([]);
  });

  it("tool_call_id matching spans inputs and outputs", () => {
    const out = normalizeLlmIO(
      { messages: [{ role: "assistant", content: [{ type: "tool_call", id: "c1", args: {} }] }] },
      {
        messages: [
          { role: "tool", tool_call_id: "c1", content: "ok" },
          { role: "tool", tool_call_id: "c2", content: "?" },
        ],
      },
    );
    expect(out.format_errors).toEqual([
      "output_messages[1].tool_call_id: does not match any earlier assistant tool call",
    ]);
  });

  it("skips what it cannot understand and reports it, without touching the originals", () => {
    const inputs = {
      messages: [
        { role: "alien", content: "x" },
        { role: "user", content: [{ type: "hologram" }, text("ok")] },
      ],
    };
    const snapshot = structuredClone(inputs);
    const out = normalizeLlmIO(inputs, { weird: true });
    expect(out.input_messages).toEqual([{ role: "user", content: [text("ok")] }]);
    expect(out.format_errors).toEqual([
      'inputs.messages[0]: unknown message role "alien"',
      'inputs.messages[1].content[0]: unsupported content block type "hologram"',
      "outputs: unrecognized LLM outputs format",
    ]);
    expect(inputs).toEqual(snapshot);
  });

  it("LangChain AI content blocks and tool_calls describing the same call are merged", () => {
    const ai = lc("AIMessage", {
      content: [text("let me check"), { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } }],
      tool_calls: [{ id: "toolu_1", name: "f", args: { a: 1 }, type: "tool_call" }],
    });
    const out = normalizeLlmIO({ messages: [[ai]] }, undefined);
    expect(out.input_messages[0].content).toEqual([
      text("let me check"),
      { type: "tool_call", id: "toolu_1", name: "f", args: { a: 1 } },
    ]);
  });

  it("LangChain messages_to_dict form ({type, data}) is understood", () => {
    const out = normalizeLlmIO({ messages: [{ type: "human", data: { content: "hi" } }] }, undefined);
    expect(out.input_messages).toEqual([{ role: "user", content: [text("hi")] }]);
  });

  it("an OpenAI refusal is kept as assistant text", () => {
    const out = normalizeLlmIO(undefined, {
      choices: [{ message: { role: "assistant", content: null, refusal: "no" } }],
    });
    expect(out.output_messages[0].content).toEqual([{ type: "text", text: "no", extras: { refusal: true } }]);
  });

  it("objects that are not messages are reported, not turned into empty messages", () => {
    const out = normalizeLlmIO(undefined, { output: { answer: 42 } });
    expect(out.output_messages).toEqual([]);
    expect(out.format_errors).toEqual(["outputs.output: not a message (no role, content or tool calls)"]);
  });

  it("missing inputs and outputs are simply empty", () => {
    expect(normalizeLlmIO(undefined, null)).toEqual({
      input_messages: [],
      output_messages: [],
      format_errors: [],
    });
  });
});
