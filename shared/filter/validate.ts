// Arity and argument-type checks that turn a comparator call into a CmpNode.

import { FilterParseError } from "../errors.ts";
import { type CmpNode, type Comparator, type FieldName, fieldKind, isFieldName, type Scalar } from "./ast.ts";
import { parseDuration, parseInstant, toNumber } from "./values.ts";

export type RawArg =
  | { type: "field"; pos: number; name: string }
  | { type: "scalar"; pos: number; value: Scalar }
  | { type: "list"; pos: number; items: Scalar[] };

const ORDERING = new Set<Comparator>(["gt", "gte", "lt", "lte"]);

export function buildComparison(op: Comparator, args: RawArg[], pos: number): CmpNode {
  if (op === "search" && args.length === 1) {
    return { kind: "cmp", op, field: null, value: stringArg(op, args[0]) };
  }
  if (op === "exists" && args.length === 1) {
    return { kind: "cmp", op, field: fieldArg(args[0]), value: true };
  }
  if (args.length !== 2) {
    const arity = op === "search" || op === "exists" ? "one or two arguments" : "exactly two arguments";
    throw new FilterParseError(`${op}() takes ${arity}, got ${args.length}`, pos);
  }
  const field = fieldArg(args[0]);
  const arg = args[1];
  switch (op) {
    case "exists": {
      if (arg.type !== "scalar" || typeof arg.value !== "boolean") {
        throw new FilterParseError("exists() expects true or false as its second argument", arg.pos);
      }
      return { kind: "cmp", op, field, value: arg.value };
    }
    case "has":
      if (field !== "tags") throw new FilterParseError("has() only applies to the field 'tags'", args[0].pos);
      return { kind: "cmp", op, field, value: stringArg(op, arg) };
    case "search":
    case "like":
    case "ilike":
      return { kind: "cmp", op, field, value: stringArg(op, arg) };
    case "in": {
      if (arg.type !== "list") throw new FilterParseError('in() expects a list like ["a", "b"]', arg.pos);
      for (const item of arg.items) checkLiteral("eq", field, item, arg.pos);
      return { kind: "cmp", op, field, value: arg.items };
    }
    default: {
      if (arg.type !== "scalar")
        throw new FilterParseError(`${op}() expects a single literal value`, arg.pos);
      checkLiteral(op, field, arg.value, arg.pos);
      return { kind: "cmp", op, field, value: arg.value };
    }
  }
}

function fieldArg(arg: RawArg): FieldName {
  if (arg.type !== "field") throw new FilterParseError("Expected a field name", arg.pos);
  if (!isFieldName(arg.name)) throw new FilterParseError(`Unknown field '${arg.name}'`, arg.pos);
  return arg.name;
}

function stringArg(op: Comparator, arg: RawArg): string {
  if (arg.type !== "scalar" || typeof arg.value !== "string") {
    throw new FilterParseError(`${op}() expects a string literal`, arg.pos);
  }
  return arg.value;
}

/** Rejects literals that can never be compared with the field, so typos fail loudly instead of matching nothing. */
function checkLiteral(op: Comparator, field: FieldName, value: Scalar, pos: number): void {
  const kind = fieldKind(field);
  const ordering = ORDERING.has(op);
  const fail = (what: string): never => {
    throw new FilterParseError(`${op}(${field}, ...) ${what}`, pos);
  };
  if (value === null) {
    if (ordering) fail("cannot compare with null");
    if (kind === "tags" || kind === "pairKey" || kind === "pairValue") fail("cannot compare with null");
    return;
  }
  switch (kind) {
    case "bool":
      if (ordering) fail("is not supported on a boolean field");
      if (typeof value !== "boolean") fail("expects true or false");
      return;
    case "time":
      if (Number.isNaN(parseInstant(value))) fail("expects an ISO-8601 timestamp or epoch milliseconds");
      return;
    case "latency":
      if (Number.isNaN(parseDuration(value))) fail('expects seconds or a duration like "2s", "500ms", "1h"');
      return;
    case "number":
      if (Number.isNaN(toNumber(value))) fail("expects a number");
      return;
    case "tags":
      if (ordering) fail("is not supported on 'tags'");
      if (typeof value !== "string") fail("expects a string");
      return;
    case "pairKey":
      if (typeof value !== "string") fail("expects a string");
      return;
    case "pairValue":
      if (ordering && typeof value === "boolean") fail("expects a string or number");
      return;
    default:
      if (typeof value === "boolean") fail("expects a string or number");
  }
}
