// Recursive-descent parser: text -> FilterNode. Throws only FilterParseError.

import { FilterParseError } from "../errors.ts";
import { COMPARATORS, type Comparator, type FilterNode, type Scalar } from "./ast.ts";
import { type Token, tokenize } from "./lexer.ts";
import { buildComparison, type RawArg } from "./validate.ts";

export const MAX_FILTER_LENGTH = 10_000;
export const MAX_NESTING_DEPTH = 64;

const COMBINATORS = new Set(["and", "or", "not"]);
const COMPARATOR_SET = new Set<string>(COMPARATORS);

export function parseFilter(text: string): FilterNode {
  try {
    return parseChecked(text);
  } catch (err) {
    if (err instanceof FilterParseError) throw err;
    // Defensive: a bug must still surface as a parse error, never as a crash of the caller.
    throw new FilterParseError(`Internal parser error (${String(err)})`, 0);
  }
}

function parseChecked(text: string): FilterNode {
  if (typeof text !== "string") throw new FilterParseError("Filter must be a string", 0);
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterParseError(`Filter longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  }
  const parser = new Parser(tokenize(text));
  if (parser.peek().type === "eof") throw new FilterParseError("Empty filter", text.length);
  const node = parser.expression(1);
  const rest = parser.peek();
  if (rest.type !== "eof") {
    throw new FilterParseError(`Unexpected ${describe(rest)}, expected end of input`, rest.pos);
  }
  return node;
}

function describe(tok: Token): string {
  if (tok.type === "eof") return "end of input";
  if (tok.type === "ident") return `'${tok.name}'`;
  if (tok.type === "string") return "string";
  if (tok.type === "number") return "number";
  return `'${tok.type}'`;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    const tok = this.peek();
    if (tok.type !== "eof") this.i++;
    return tok;
  }

  private expect(type: "(" | ")" | "]"): Token {
    const tok = this.next();
    if (tok.type !== type) {
      throw new FilterParseError(`Expected '${type}' but found ${describe(tok)}`, tok.pos);
    }
    return tok;
  }

  expression(depth: number): FilterNode {
    const head = this.next();
    if (head.type !== "ident") {
      throw new FilterParseError(`Expected a filter expression but found ${describe(head)}`, head.pos);
    }
    if (depth > MAX_NESTING_DEPTH) {
      throw new FilterParseError(`Nesting deeper than ${MAX_NESTING_DEPTH} levels`, head.pos);
    }
    const name = head.name;
    if (!COMBINATORS.has(name) && !COMPARATOR_SET.has(name)) {
      throw new FilterParseError(`Unknown comparator '${name}'`, head.pos);
    }
    this.expect("(");
    if (name === "and" || name === "or" || name === "not") return this.combinator(name, head.pos, depth);
    const args = this.list(")", () => this.argument());
    return buildComparison(name as Comparator, args, head.pos);
  }

  private combinator(name: "and" | "or" | "not", pos: number, depth: number): FilterNode {
    const children = this.list(")", () => this.expression(depth + 1));
    if (name === "not") {
      if (children.length !== 1) throw new FilterParseError("not() takes exactly one argument", pos);
      return { kind: "not", child: children[0] };
    }
    if (children.length === 0) throw new FilterParseError(`${name}() needs at least one argument`, pos);
    return { kind: name, children };
  }

  /** Comma-separated items up to and including the closing token. */
  private list<T>(close: ")" | "]", item: () => T): T[] {
    const items: T[] = [];
    if (this.peek().type === close) {
      this.next();
      return items;
    }
    for (;;) {
      items.push(item());
      const tok = this.next();
      if (tok.type === close) return items;
      if (tok.type !== ",") {
        throw new FilterParseError(`Expected ',' or '${close}' but found ${describe(tok)}`, tok.pos);
      }
    }
  }

  private argument(): RawArg {
    const tok = this.peek();
    if (tok.type === "ident" && this.peek(1).type === "(") {
      throw new FilterParseError(
        `Nested expression '${tok.name}(...)' is not allowed as a comparator argument`,
        tok.pos,
      );
    }
    if (tok.type === "[") {
      this.next();
      const items = this.list("]", () => this.scalar());
      return { type: "list", pos: tok.pos, items };
    }
    if (tok.type === "ident" && !isKeyword(tok.name)) {
      this.next();
      return { type: "field", pos: tok.pos, name: tok.name };
    }
    return { type: "scalar", pos: tok.pos, value: this.scalar() };
  }

  private scalar(): Scalar {
    const tok = this.next();
    if (tok.type === "string" || tok.type === "number") return tok.value;
    if (tok.type === "ident" && isKeyword(tok.name)) return tok.name === "null" ? null : tok.name === "true";
    throw new FilterParseError(`Expected a literal value but found ${describe(tok)}`, tok.pos);
  }
}

function isKeyword(name: string): boolean {
  return name === "true" || name === "false" || name === "null";
}
