// Canonical text for an AST; parseFilter(printFilter(ast)) reproduces ast exactly.
import type { FilterNode, Literal, Scalar } from "./ast.ts";

export function printFilter(node: FilterNode): string {
  switch (node.kind) {
    case "and":
    case "or":
      return `${node.kind}(${node.children.map(printFilter).join(", ")})`;
    case "not":
      return `not(${printFilter(node.child)})`;
    case "cmp":
      return node.field === null
        ? `${node.op}(${printLiteral(node.value)})`
        : `${node.op}(${node.field}, ${printLiteral(node.value)})`;
  }
}

function printLiteral(value: Literal): string {
  return Array.isArray(value) ? `[${value.map(printScalar).join(", ")}]` : printScalar(value);
}

function printScalar(value: Scalar): string {
  // JSON escapes are a subset of the lexer's, and String(number) is the shortest exact round-trip form.
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}
