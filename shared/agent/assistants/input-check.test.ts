import { describe, expect, it } from "vitest";
import { inputCheckSchema } from "./input-check.ts";

describe("the schema input is checked against", () => {
  const items = { type: "array", items: { $ref: "#/definitions/BaseMessage" } };
  it("takes any message where BaseMessage is the union of the message classes; the rest is unchanged", () => {
    const union = { oneOf: [{ $ref: "#/definitions/HumanMessage" }] };
    const schema = {
      type: "object",
      properties: { messages: items, n: { type: "number" } },
      definitions: { BaseMessage: union, HumanMessage: { type: "object" } },
    };
    expect(inputCheckSchema(schema)).toEqual({
      ...schema,
      definitions: { BaseMessage: {}, HumanMessage: { type: "object" } },
    });
    expect(schema.definitions.BaseMessage).toBe(union);
  });

  it("keeps a BaseMessage written as a message's wire shape, and a schema without messages, as they are", () => {
    const flat = {
      definitions: { BaseMessage: { type: "object", required: ["content"] } },
      properties: { items },
    };
    expect(inputCheckSchema(flat)).toBe(flat);
    const plain = { type: "object", properties: { n: { type: "number" } } };
    expect(inputCheckSchema(plain)).toBe(plain);
  });
});
