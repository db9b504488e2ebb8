import { Refused } from "./refusal.ts";

// Just enough of DynamoDB's expression grammar to know which attributes a request names: the first segment of
// each document path, and the partition key's equality in a key condition. Anything it cannot read is refused.

export type Token = { kind: "name" | "value" | "number" | "op"; text: string };
const TOKEN =
  /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[=<>(),.[\]+-]))/y;
const MAX_EXPRESSION = 4096;

const invalid = (what: string, why: string) => new Refused("ValidationException", `Invalid ${what}: ${why}`);

export function tokenize(expr: string, what: string): Token[] {
  if (expr.length > MAX_EXPRESSION) throw invalid(what, "the expression is too long");
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    if (/^\s*$/.test(expr.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(expr);
    if (!m) throw invalid(what, `unexpected character at ${at}`);
    if (m[1] || m[3]) out.push({ kind: "name", text: m[1] ?? m[3] });
    else if (m[2]) out.push({ kind: "value", text: m[2] });
    else if (m[4]) out.push({ kind: "number", text: m[4] });
    else out.push({ kind: "op", text: m[5] });
  }
  return out;
}

export interface Placeholders {
  names?: unknown;
  values?: unknown;
}

/** An attribute name as written: `#n` resolved through ExpressionAttributeNames. */
export function resolveName(token: string, p: Placeholders, what: string): string {
  if (!token.startsWith("#")) return token;
  const names = p.names as Record<string, unknown> | undefined;
  const v = names && typeof names === "object" && Object.hasOwn(names, token) ? names[token] : undefined;
  if (typeof v !== "string") throw invalid(what, `an expression attribute name is not defined: ${token}`);
  return v;
}

/** Splits tokens at top-level commas. */
export function split(tokens: Token[]): Token[][] {
  const parts: Token[][] = [[]];
  let depth = 0;
  for (const t of tokens) {
    if (t.text === "(" || t.text === "[") depth++;
    if (t.text === ")" || t.text === "]") depth--;
    if (t.kind === "op" && t.text === "," && depth === 0) parts.push([]);
    else parts[parts.length - 1].push(t);
  }
  return parts;
}

/** The first segment of the document path a list of tokens starts with. */
function pathHead(tokens: Token[], p: Placeholders, what: string): string {
  const t = tokens[0];
  if (t?.kind !== "name") throw invalid(what, "expected a document path");
  return resolveName(t.text, p, what);
}

/** Top-level attribute names of a ProjectionExpression. */
export function projectionNames(expr: string, p: Placeholders): string[] {
  const what = "ProjectionExpression";
  return split(tokenize(expr, what)).map((part) => pathHead(part, p, what));
}

export const CLAUSES = new Set(["SET", "REMOVE", "ADD", "DELETE"]);

/** Top-level attribute names an UpdateExpression writes (SET/REMOVE/ADD/DELETE targets). */
export function updatedNames(expr: string, p: Placeholders): string[] {
  const what = "UpdateExpression";
  const tokens = tokenize(expr, what);
  const names: string[] = [];
  let i = 0;
  if (tokens.length === 0) throw invalid(what, "the expression is empty");
  while (i < tokens.length) {
    const clause = tokens[i];
    if (clause.kind !== "name" || !CLAUSES.has(clause.text.toUpperCase()))
      throw invalid(what, `expected SET, REMOVE, ADD or DELETE, found ${clause.text}`);
    let j = i + 1;
    while (j < tokens.length && !(tokens[j].kind === "name" && CLAUSES.has(tokens[j].text.toUpperCase())))
      j++;
    const actions = split(tokens.slice(i + 1, j));
    for (const action of actions) names.push(pathHead(action, p, what));
    i = j;
  }
  return names;
}

/** The value the key condition compares the partition key to with `=`: exactly one such equality is required. */
export function partitionKeyValue(expr: string, partitionKey: string, p: Placeholders): unknown {
  const what = "KeyConditionExpression";
  const tokens = tokenize(expr, what);
  const found: unknown[] = [];
  for (let i = 1; i + 1 < tokens.length; i++) {
    if (tokens[i].text !== "=" || tokens[i].kind !== "op") continue;
    const [a, b] = [tokens[i - 1], tokens[i + 1]];
    const pair =
      a.kind === "name" && b.kind === "value"
        ? [a, b]
        : b.kind === "name" && a.kind === "value"
          ? [b, a]
          : undefined;
    if (pair && resolveName(pair[0].text, p, what) === partitionKey)
      found.push(resolveValue(pair[1].text, p, what));
  }
  if (found.length !== 1)
    throw invalid(what, `the query must compare the partition key ${partitionKey} with = exactly once`);
  return found[0];
}

export function resolveValue(token: string, p: Placeholders, what: string): unknown {
  const values = p.values as Record<string, unknown> | undefined;
  const v = values && typeof values === "object" && Object.hasOwn(values, token) ? values[token] : undefined;
  if (v === undefined) throw invalid(what, `an expression attribute value is not defined: ${token}`);
  return v;
}
