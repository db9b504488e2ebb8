import { FilterParseError } from "../errors.ts";
// Tokenizer for the filter language; every failure is a positioned FilterParseError.

export type Token =
  | { type: "(" | ")" | "[" | "]" | "," | "eof"; pos: number }
  | { type: "ident"; pos: number; name: string }
  | { type: "string"; pos: number; value: string }
  | { type: "number"; pos: number; value: number };

const IDENT_START = /[A-Za-z_]/;
const IDENT_REST = /[A-Za-z0-9_]/y;
const NUMBER_RE = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
  "\\": "\\",
  '"': '"',
  "'": "'",
  "/": "/",
};

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "(" || c === ")" || c === "[" || c === "]" || c === ",") {
      tokens.push({ type: c, pos: i });
      i++;
    } else if (c === '"' || c === "'") {
      const [value, end] = readString(text, i);
      tokens.push({ type: "string", pos: i, value });
      i = end;
    } else if (IDENT_START.test(c)) {
      IDENT_REST.lastIndex = i + 1;
      let end = i + 1;
      while (IDENT_REST.test(text)) end = IDENT_REST.lastIndex;
      tokens.push({ type: "ident", pos: i, name: text.slice(i, end) });
      i = end;
    } else {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(text);
      if (!m) throw new FilterParseError(`Unexpected character ${JSON.stringify(c)}`, i);
      const value = Number(m[0]);
      if (!Number.isFinite(value)) throw new FilterParseError(`Number ${m[0]} is out of range`, i);
      // Normalise -0 so printed and re-parsed ASTs compare equal.
      tokens.push({ type: "number", pos: i, value: value === 0 ? 0 : value });
      i = NUMBER_RE.lastIndex;
    }
  }
  tokens.push({ type: "eof", pos: text.length });
  return tokens;
}

/** Reads a quoted string starting at `start`; returns its value and the index after the closing quote. */
function readString(text: string, start: number): [string, number] {
  const quote = text[start];
  let out = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === quote) return [out, i + 1];
    if (c !== "\\") {
      out += c;
      i++;
      continue;
    }
    if (i + 1 >= text.length) break;
    const e = text[i + 1];
    if (e === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new FilterParseError("Invalid \\u escape", i);
      out += String.fromCharCode(Number.parseInt(hex, 16));
      i += 6;
    } else {
      // Unknown escapes keep their backslash so LIKE patterns can say "50\%" for a literal percent.
      out += SIMPLE_ESCAPES[e] ?? `\\${e}`;
      i += 2;
    }
  }
  // Reported at the opening quote: that is where the user has to look.
  throw new FilterParseError("Unterminated string", start);
}
