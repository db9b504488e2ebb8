import { describe, expect, it } from "vitest";
import { emptyValue, fieldOf, formMessages, parseJson, toInput, validate } from "./schema-form.ts";

// The example agent's input schema, as /assistants/{id}/schemas answers it.
const messagesSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" } } },
  definitions: {
    BaseMessage: {
      type: "object",
      properties: { type: { type: "string" }, content: { anyOf: [{ type: "string" }, { type: "array" }] } },
      required: ["content"],
    },
  },
};

const rich = {
  type: "object",
  required: ["topic", "depth"],
  properties: {
    topic: { type: "string", description: "What to research" },
    depth: { type: "integer" },
    score: { anyOf: [{ type: "number" }, { type: "null" }] },
    verbose: { type: "boolean" },
    mode: { enum: ["fast", "thorough"] },
    tags: { type: "array", items: { type: "string" } },
    options: { type: "object", properties: { lang: { type: "string" } } },
    extra: { type: "object", additionalProperties: true },
  },
};

describe("schema form", () => {
  it("messages as the reference types them (BaseMessage: oneOf the message classes) are a messages field too", () => {
    const cls = (type: string) => ({
      type: "object",
      properties: { type: { type: "string", const: type }, content: { type: "string" } },
    });
    const typed = {
      type: "object",
      properties: { messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" } } },
      definitions: {
        BaseMessage: {
          description: "Base class for all types of messages in a conversation.",
          oneOf: [{ $ref: "#/definitions/BaseMessageChunk" }, { $ref: "#/definitions/HumanMessage" }],
        },
        BaseMessageChunk: { oneOf: [{ $ref: "#/definitions/AIMessageChunk" }] },
        AIMessageChunk: cls("ai"),
        HumanMessage: cls("human"),
      },
    };
    expect(fieldOf(typed)).toMatchObject({
      kind: "object",
      properties: [{ name: "messages", field: { kind: "messages" } }],
    });
    // A message in the form's {role, content} passes the check (the class union is no wire format).
    expect(validate(typed, { messages: [{ role: "user", content: "hi" }] })).toEqual([]);
    expect(validate(typed, { messages: "hi" })).not.toEqual([]);
    // A union of anything else is no messages field.
    const other = { ...typed, definitions: { ...typed.definitions, HumanMessage: { type: "string" } } };
    expect(fieldOf(other)).toMatchObject({ properties: [{ field: { kind: "array" } }] });
  });

  it("a messages array becomes a messages field", () => {
    const f = fieldOf(messagesSchema);
    expect(f).toEqual({
      kind: "object",
      properties: [
        {
          name: "messages",
          title: "messages",
          required: false,
          description: undefined,
          field: { kind: "messages" },
        },
      ],
    });
  });

  it("strings, integers, nullable numbers, booleans, enums, arrays, nested objects and free objects", () => {
    const f = fieldOf(rich);
    if (f.kind !== "object") throw new Error(f.kind);
    expect(Object.fromEntries(f.properties.map((p) => [p.name, p.field]))).toEqual({
      topic: { kind: "string", format: undefined },
      depth: { kind: "number", integer: true },
      score: { kind: "number", integer: false },
      verbose: { kind: "boolean" },
      mode: { kind: "enum", options: ["fast", "thorough"] },
      tags: { kind: "array", items: { kind: "string", format: undefined } },
      options: { kind: "object", properties: [expect.objectContaining({ name: "lang", required: false })] },
      extra: { kind: "json" },
    });
    expect(f.properties[0]!.description).toBe("What to research");
  });

  it("a new form holds the required fields' empty values", () => {
    expect(emptyValue(fieldOf(rich))).toEqual({ topic: "", depth: undefined });
  });

  it("sends messages as {role, content} and leaves empty optional parts out", () => {
    const f = fieldOf(messagesSchema);
    expect(
      toInput(f, {
        messages: [
          { role: "user", content: "hi" },
          { role: "user", content: " " },
        ],
      }),
    ).toEqual({
      messages: [{ role: "user", content: "hi" }],
    });
    expect(toInput(fieldOf(rich), { topic: "x", depth: 2, tags: [], options: { lang: "" } })).toEqual({
      topic: "x",
      depth: 2,
    });
  });

  it("reads a state's LangChain messages back into form messages", () => {
    expect(
      formMessages([
        { type: "human", content: "q" },
        { type: "ai", content: [{ t: 1 }] },
      ]),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: '[{"t":1}]' },
    ]);
  });

  it("validates raw JSON against the schema, naming the path that is wrong", () => {
    expect(validate(rich, { topic: "x", depth: 1 })).toEqual([]);
    expect(validate(rich, { topic: 3, depth: 1 }).join()).toMatch(/\/topic: .*string/);
    expect(validate(rich, { topic: "x" }).join()).toMatch(/depth/);
    expect(validate(messagesSchema, { messages: [{ type: "human" }] }).join()).toMatch(/content/);
    expect(validate(null, 1)).toEqual([]);
  });

  it("says when raw text is not JSON", () => {
    expect(parseJson("{").error).toMatch(/Not JSON/);
    expect(parseJson('{"a":1}').value).toEqual({ a: 1 });
  });
});
