import { describe, expect, it } from "vitest";
import { validateMessages } from "./format.ts";

const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_call", id, name: "lookup", args: { q: "x" } }],
});

function errorsOf(value: unknown): string[] {
  const result = validateMessages(value);
  return result.ok ? [] : result.errors;
}

describe("platform message format", () => {
  it("accepts a valid conversation and keeps extra keys", () => {
    const result = validateMessages({
      messages: [
        { role: "system", content: [{ type: "text", text: "be brief" }] },
        { role: "user", content: [{ type: "text", text: "hi", client_field: 1 }], client_id: "u1" },
        call("c1"),
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "42" }] },
        { role: "reasoning", content: [{ type: "reasoning", text: "thinking" }] },
      ],
    });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.messages[1].client_id).toBe("u1");
      expect(result.messages[1].content[0]).toMatchObject({ client_field: 1 });
    }
  });

  it("requires role and content", () => {
    expect(errorsOf({ messages: [{ content: [] }, { role: "user" }] })).toEqual([
      expect.stringMatching(/^messages\[0\]\.role: /),
      "messages[1].content: is required",
    ]);
  });

  it("rejects unknown roles", () => {
    expect(errorsOf({ messages: [{ role: "human", content: [] }] })[0]).toMatch(/^messages\[0\]\.role: /);
  });

  it("tool_call_id is only valid on tool messages", () => {
    expect(errorsOf({ messages: [call("c1"), { role: "user", tool_call_id: "c1", content: [] }] })).toEqual([
      'messages[1].tool_call_id: only allowed on messages with role "tool"',
    ]);
  });

  it("tool_call_id must match an earlier assistant tool call", () => {
    const later = { messages: [{ role: "tool", tool_call_id: "c1", content: [] }, call("c1")] };
    expect(errorsOf(later)).toEqual([
      "messages[0].tool_call_id: does not match any earlier assistant tool call",
    ]);
    const fromUser = {
      messages: [
        { role: "user", content: [{ type: "tool_call", id: "c1", args: {} }] },
        { role: "tool", tool_call_id: "c1", content: [] },
      ],
    };
    expect(errorsOf(fromUser)).toEqual([
      "messages[1].tool_call_id: does not match any earlier assistant tool call",
    ]);
  });

  it("tool_call_id may match a tool_calls entry of an earlier assistant message", () => {
    const value = {
      messages: [
        { role: "assistant", content: [], tool_calls: [{ id: "c9", name: "f", args: {} }] },
        { role: "tool", tool_call_id: "c9", content: [] },
      ],
    };
    expect(validateMessages(value).ok).toBe(true);
  });

  it("text and reasoning blocks require text", () => {
    const value = {
      messages: [{ role: "user", content: [{ type: "text" }, { type: "reasoning", text: 3 }] }],
    };
    expect(errorsOf(value)).toEqual([
      "messages[0].content[0].text: is required",
      expect.stringMatching(/^messages\[0\]\.content\[1\]\.text: .*expected string/),
    ]);
  });

  it("media blocks require one of url, base64 or id", () => {
    const ok = ["image", "file", "audio", "video"].map((type, i) => ({
      type,
      ...[{ url: "https://x/y" }, { base64: "AAAA" }, { id: "file_1" }, { url: "u", mime_type: "video/mp4" }][
        i
      ],
    }));
    expect(validateMessages({ messages: [{ role: "user", content: ok }] }).ok).toBe(true);
    expect(
      errorsOf({ messages: [{ role: "user", content: [{ type: "image", mime_type: "image/png" }] }] }),
    ).toEqual(["messages[0].content[0]: one of url, base64 or id is required"]);
  });

  it("tool_call blocks require an args object", () => {
    const value = {
      messages: [{ role: "assistant", content: [{ type: "tool_call", name: "f", args: "{}" }] }],
    };
    expect(errorsOf(value)[0]).toMatch(/^messages\[0\]\.content\[0\]\.args: /);
  });

  it("server_tool_call requires id, name and args", () => {
    const value = { messages: [{ role: "assistant", content: [{ type: "server_tool_call", id: "s1" }] }] };
    expect(errorsOf(value)).toEqual([
      "messages[0].content[0].name: is required",
      "messages[0].content[0].args: is required",
    ]);
  });

  it("server_tool_result requires tool_call_id and a success|error status", () => {
    const value = {
      messages: [{ role: "assistant", content: [{ type: "server_tool_result", status: "done", output: 1 }] }],
    };
    expect(errorsOf(value)).toEqual([
      "messages[0].content[0].tool_call_id: is required",
      expect.stringMatching(/^messages\[0\]\.content\[0\]\.status: /),
    ]);
  });

  it("rejects unknown block types by path", () => {
    expect(errorsOf({ messages: [{ role: "user", content: [{ type: "hologram" }] }] })[0]).toMatch(
      /^messages\[0\]\.content\[0\]\.type: /,
    );
  });

  it("usage_metadata token counts must be integers", () => {
    const value = {
      messages: [{ role: "assistant", content: [], usage_metadata: { input_tokens: 1.5, extra: 1 } }],
    };
    expect(errorsOf(value)[0]).toMatch(/^messages\[0\]\.usage_metadata\.input_tokens: /);
    const ok = { input_tokens: 3, output_tokens: 2, total_tokens: 5, input_token_details: { cache_read: 1 } };
    expect(validateMessages({ messages: [{ role: "assistant", content: [], usage_metadata: ok }] }).ok).toBe(
      true,
    );
  });

  it("requires a messages array", () => {
    expect(errorsOf(null)).toEqual(["(root): Invalid input: expected object, received null"]);
    expect(errorsOf({})).toEqual(["messages: is required"]);
  });
});
