// The schema a graph's input (or a state update) is checked against before it is sent: the graph's JSON schema,
// messages aside. A schema read from the graph's types defines BaseMessage as the union of the message classes
// (ts-message-classes.ts, as the reference writes it): their shape, not what a run takes. The graph's messages
// reducer takes any message-like value (a string, a [role, content] pair, {role|type, content}) and checks it
// itself. The MCP server and the console's forms check with this; the served schema stays the reference's.

type Schema = Record<string, unknown>;

export function inputCheckSchema<S extends Schema>(schema: S): S {
  const { definitions } = schema;
  if (definitions === null || typeof definitions !== "object") return schema;
  const message = (definitions as Schema).BaseMessage as Schema | undefined;
  // Only the union of the classes; a BaseMessage written as a message's wire shape is checked as it is.
  if (!message || !(Array.isArray(message.oneOf) || Array.isArray(message.anyOf))) return schema;
  return { ...schema, definitions: { ...definitions, BaseMessage: {} } };
}
