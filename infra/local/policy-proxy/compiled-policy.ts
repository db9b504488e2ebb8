import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import type { Authorization } from "./refusal.ts";

// An identity policy compiled once into matchers: each statement's actions, resources and conditions as regular
// expressions built exactly as @cloud-copilot/iam-simulate builds them per call (the same wildcards, the same
// case rules, the same missing-key and set-operator semantics), so a compiled decision is the simulator's decision.
// Only what the platform's generated policies use is compiled (infra/policies/roles.ts,
// shared/containment/runtime-policy.ts: Action/NotAction, Resource, the String operators with IfExists and the
// set operators, Null); a policy with anything else (NotResource, Principal, policy variables, short ARNs, other
// operators) is not compiled and the simulator decides it. evaluate.ts says which requests reach the matchers.

export type Decision = "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied";

/** A request context as the simulator reads it: keys case-insensitive (the last of a spelling wins). */
export type Context = Map<string, string | string[]>;

interface CompiledCondition {
  /** The context key, lowercased. */
  key: string;
  kind: "Null" | "single" | "ForAllValues" | "ForAnyValue";
  /** StringNotEquals, StringNotLike…: a missing key matches (single-valued form). */
  negative: boolean;
  ifExists: boolean;
  /** Null: the values, lowercased. Otherwise one expression per policy value. */
  nullValues: string[];
  patterns: RegExp[];
}

export interface CompiledStatement {
  deny: boolean;
  /** Action, or NotAction when `notAction`: per entry, undefined for a wildcard, else the service and a pattern. */
  actions: ({ service: string; pattern: RegExp } | "*" | "never")[];
  notAction: boolean;
  resources: (CompiledResource | "*")[];
  conditions: CompiledCondition[];
}

interface CompiledResource {
  partition: RegExp;
  service: RegExp;
  region: RegExp;
  account: RegExp;
  product: string;
  id: RegExp;
}

export interface CompiledPolicy {
  statements: CompiledStatement[];
}

const ALL_WILDCARDS = /^\*+$/;
const WHITESPACE = /\s/;

/** The simulator's action and ARN-segment patterns: `?` one character, `*` any run, the rest as written. */
const segmentPattern = (s: string, flags: string) =>
  new RegExp(`^${s.replace(/\?/g, ".").replace(/\*/g, ".*?")}$`, flags);

const REGEX_META = new Set([".", "*", "+", "?", "^", "$", "{", "}", "(", ")", "|", "[", "]", "\\"]);
const escapeLiteral = (s: string) => {
  let out = "";
  for (const c of s) out += REGEX_META.has(c) ? `\\${c}` : c;
  return out;
};
/** The simulator's IAM string (a resource id, a condition value) as an expression, wildcards on or off. */
function iamStringPattern(value: string, wildcards: boolean, flags = ""): RegExp {
  let out = "";
  let literal = "";
  for (const c of value) {
    if (c === "*" || c === "?") {
      out += escapeLiteral(literal);
      literal = "";
      out += wildcards ? (c === "*" ? ".*?" : ".") : `\\${c}`;
    } else literal += c;
  }
  return new RegExp(`^${out}${escapeLiteral(literal)}$`, flags);
}

/** The first segment of `value` split at `delimiter` from `index` on (as the policy library reads ARNs). */
function segmentAt(value: string, index: number): string | undefined {
  let start = 0;
  for (let i = 0; i < index; i++) {
    const at = value.indexOf(":", start);
    if (at === -1) return undefined;
    start = at + 1;
  }
  const end = value.indexOf(":", start);
  return end === -1 ? value.slice(start) : value.slice(start, end);
}

function remainderAt(value: string, index: number): string | undefined {
  let start = 0;
  for (let i = 0; i < index; i++) {
    const at = value.indexOf(":", start);
    if (at === -1) return undefined;
    start = at + 1;
  }
  return value.slice(start);
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

class Unsupported extends Error {}
const unsupported = (why: string): never => {
  throw new Unsupported(why);
};

function compileAction(raw: unknown): CompiledStatement["actions"][number] {
  if (typeof raw !== "string") return unsupported("a non-string action");
  if (ALL_WILDCARDS.test(raw)) return "*";
  const part = segmentAt(raw, 1);
  if (part === undefined) return unsupported("an action without a service");
  if (part.length === 0 || WHITESPACE.test(part)) return "never";
  return { service: (segmentAt(raw, 0) as string).toLowerCase(), pattern: segmentPattern(part, "i") };
}

function compileResource(raw: unknown): CompiledStatement["resources"][number] {
  if (typeof raw !== "string") return unsupported("a non-string resource");
  if (ALL_WILDCARDS.test(raw)) return "*";
  if (raw.includes("${")) return unsupported("a policy variable");
  if (raw.split(":").length < 6) return unsupported("a short ARN");
  const [partition, service, region, account] = [1, 2, 3, 4].map((i) => segmentAt(raw, i) as string);
  const rest = remainderAt(raw, 5) as string;
  // The product part ("table/", "function:"…) is matched as a literal prefix; S3's bucket ARNs have none.
  let product = "";
  if (!(service === "s3" && account === "" && region === "")) {
    const slash = rest.indexOf("/");
    const colon = rest.indexOf(":");
    const split =
      slash !== -1 && colon !== -1 ? Math.min(slash, colon) + 1 : colon === -1 ? slash + 1 : colon + 1;
    product = rest.slice(0, split);
  }
  return {
    partition: segmentPattern(partition, "i"),
    service: segmentPattern(service, "i"),
    region: segmentPattern(region, "i"),
    account: segmentPattern(account, "i"),
    product,
    id: iamStringPattern(rest.slice(product.length), true),
  };
}

const STRING_OPERATOR =
  /^(?:(ForAllValues|ForAnyValue):)?(StringEquals|StringNotEquals|StringEqualsIgnoreCase|StringNotEqualsIgnoreCase|StringLike|StringNotLike)(IfExists)?$/;

function compileCondition(op: string, key: string, values: unknown): CompiledCondition {
  const strings = list(values).map((v) => String(v));
  if (strings.some((v) => v.includes("${"))) return unsupported("a policy variable");
  if (op === "Null")
    return {
      key: key.toLowerCase(),
      kind: "Null",
      negative: false,
      ifExists: false,
      nullValues: strings.map((v) => v.toLowerCase()),
      patterns: [],
    };
  const m = STRING_OPERATOR.exec(op);
  if (!m) return unsupported(`the condition operator ${op}`);
  const base = m[2];
  const wildcards = base.endsWith("Like");
  const flags = base.endsWith("IgnoreCase") ? "i" : "";
  return {
    key: key.toLowerCase(),
    kind: (m[1] as "ForAllValues" | "ForAnyValue" | undefined) ?? "single",
    negative: base.includes("Not"),
    ifExists: m[3] !== undefined,
    nullValues: [],
    patterns: strings.map((v) => iamStringPattern(v, wildcards, flags)),
  };
}

function compileStatement(raw: unknown): CompiledStatement {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return unsupported("a statement shape");
  const st = raw as Record<string, unknown>;
  for (const k of Object.keys(st))
    if (!["Sid", "Effect", "Action", "NotAction", "Resource", "Condition"].includes(k))
      return unsupported(`the element ${k}`);
  if (st.Effect !== "Allow" && st.Effect !== "Deny") return unsupported("an effect");
  if ((st.Action === undefined) === (st.NotAction === undefined)) return unsupported("Action and NotAction");
  if (st.Resource === undefined) return unsupported("a statement without Resource");
  const conditions: CompiledCondition[] = [];
  if (st.Condition !== undefined) {
    if (typeof st.Condition !== "object" || st.Condition === null) return unsupported("a condition block");
    for (const [op, byKey] of Object.entries(st.Condition as Record<string, unknown>)) {
      if (typeof byKey !== "object" || byKey === null) return unsupported("a condition block");
      for (const [key, values] of Object.entries(byKey as Record<string, unknown>))
        conditions.push(compileCondition(op, key, values));
    }
  }
  return {
    deny: st.Effect === "Deny",
    actions: list(st.Action ?? st.NotAction).map(compileAction),
    notAction: st.Action === undefined,
    resources: list(st.Resource).map(compileResource),
    conditions,
  };
}

/**
 * The policy's matchers, or why it is not compiled (the simulator decides it). Expects a policy the simulator's
 * validation accepted (evaluate.ts validates first).
 */
export function compilePolicy(policy: PolicyDocument): CompiledPolicy | { unsupported: string } {
  try {
    return { statements: list((policy as { Statement: unknown }).Statement).map(compileStatement) };
  } catch (err) {
    if (err instanceof Unsupported || err instanceof SyntaxError) return { unsupported: err.message };
    throw err;
  }
}

/** Does the statement's Action (or NotAction) take the request's action ("service:Action" as sent)? */
function actionMatches(st: CompiledStatement, service: string, action: string | undefined): boolean {
  let any = false;
  for (const a of st.actions) {
    const hit = a === "*" || (a !== "never" && a.service === service && a.pattern.test(action as string));
    if (hit) {
      any = true;
      break;
    }
  }
  return st.notAction ? !any : any;
}

/** Does one of the statement's resources take the request's resource (an ARN without wildcards)? */
function resourceMatches(st: CompiledStatement, parts: string[], rest: string): boolean {
  for (const r of st.resources) {
    if (r === "*") return true;
    if (
      r.partition.test(parts[1]) &&
      r.service.test(parts[2]) &&
      r.region.test(parts[3]) &&
      r.account.test(parts[4]) &&
      rest.startsWith(r.product) &&
      r.id.test(rest.slice(r.product.length))
    )
      return true;
  }
  return false;
}

/** The statements whose action and resource take the request: the only ones its context is read for. */
export function applicableStatements(
  policy: CompiledPolicy,
  action: string,
  resource: string,
): CompiledStatement[] {
  const actionParts = action.split(":");
  const service = actionParts[0].toLowerCase();
  const parts = resource.split(":");
  const rest = parts.slice(5).join(":");
  return policy.statements.filter(
    (st) => actionMatches(st, service, actionParts[1]) && resourceMatches(st, parts, rest),
  );
}

/** The context keys these statements' conditions read (lowercased, each once). */
export function keysRead(statements: CompiledStatement[]): string[] {
  return [...new Set(statements.flatMap((st) => st.conditions.map((c) => c.key)))];
}

const anyPattern = (patterns: RegExp[], value: string) => patterns.some((p) => p.test(value));
/** The base operator on one request value: positive ones match any policy value, negative ones none. */
const baseMatches = (c: CompiledCondition, value: string) =>
  c.negative ? !anyPattern(c.patterns, value) : anyPattern(c.patterns, value);

function conditionHolds(c: CompiledCondition, context: Context): boolean {
  const value = context.get(c.key);
  if (c.kind === "Null") return c.nullValues.includes(value === undefined ? "true" : "false");
  if (c.kind === "single") {
    if (value === undefined) return c.ifExists || c.negative;
    if (typeof value !== "string") return false;
    return baseMatches(c, value);
  }
  if (value === undefined) return c.kind === "ForAllValues";
  const values = typeof value === "string" ? [value] : value;
  return c.kind === "ForAllValues"
    ? values.every((v) => baseMatches(c, v))
    : values.some((v) => baseMatches(c, v));
}

/** The identity policy's decision over its applicable statements: a matching Deny, else a matching Allow. */
export function identityDecision(statements: CompiledStatement[], context: Context): Decision {
  let allowed = false;
  for (const st of statements) {
    if (!st.conditions.every((c) => conditionHolds(c, context))) continue;
    if (st.deny) return "ExplicitlyDenied";
    allowed = true;
  }
  return allowed ? "Allowed" : "ImplicitlyDenied";
}

/** The request context as the simulator keys it, or undefined when a value is neither a string nor strings. */
export function contextOf(context: Authorization["context"]): Context | undefined {
  const out: Context = new Map();
  for (const key in context) {
    const v = context[key];
    if (typeof v !== "string" && !(Array.isArray(v) && v.every((s) => typeof s === "string")))
      return undefined;
    out.set(key.toLowerCase(), v);
  }
  return out;
}
