import {
  createValidatedPolicy,
  validateIdentityPolicy,
  validateResourcePolicy,
} from "@cloud-copilot/iam-policy";
import { runUnsafeSimulation } from "@cloud-copilot/iam-simulate";
import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import {
  applicableStatements,
  type CompiledPolicy,
  type CompiledStatement,
  type Context,
  compilePolicy,
  contextOf,
  type Decision,
  identityDecision,
  keysRead,
} from "./compiled-policy.ts";
import type { Authorization } from "./refusal.ts";

// IAM evaluation as @cloud-copilot/iam-simulate decides it. A policy is validated once, then compiled once into
// matchers (compiled-policy.ts) that decide as the simulator does; what the compiler does not take (a policy
// element it does not compile, a request outside the same-account identity-policy case it models) goes to the
// simulator itself, so a decision never depends on which of the two made it (policy-evaluation.fuzz.test.ts
// compares them). Decisions are remembered per policy document, by (principal, action, resource, the values of
// the context keys the applicable statements read): a new thread's LeadingKeys is a new decision, the same
// thread's next call a lookup. A changed policy is a new document (the local IAM stores text; each principal
// gets its documents parsed anew), whose decisions start empty.

export type { Decision } from "./compiled-policy.ts";

export interface EvaluatorOptions {
  /** Who decides a compilable request: the compiled matchers (the default) or the simulator every time. */
  engine?: "compiled" | "simulator";
  /** Remember decisions (the default): off, every call is decided anew (what the bench compares). */
  cache?: boolean;
}

export interface Denial {
  decision: Exclude<Decision, "Allowed">;
  authorization: Authorization;
}

export interface PolicyEvaluator {
  /** The first authorization the policy does not allow, or undefined when it allows them all. */
  firstDenial(
    principalArn: string,
    account: string,
    policy: PolicyDocument,
    auths: Authorization[],
  ): Denial | undefined;
}

const validated = new WeakMap<PolicyDocument, string | undefined>();
/** Decisions remembered per policy before the memory starts again. */
const MAX_DECISIONS = 4096;

/** Why the policy cannot be evaluated, or undefined when it is a valid identity policy (cached per document). */
export function policyProblem(policy: PolicyDocument): string | undefined {
  if (!validated.has(policy)) {
    const errors = validateIdentityPolicy(policy);
    validated.set(
      policy,
      errors.length ? errors.map((e) => `${e.path}: ${e.message}`).join("; ") : undefined,
    );
  }
  return validated.get(policy);
}

/** What one (principal, account, action, resource) resolves to under one policy. */
interface Target {
  /** The compiled statements that apply, or undefined when the simulator decides this target. */
  statements?: CompiledStatement[];
  /** The context keys those statements read. */
  keys: string[];
  /** The decision when it reads no context key. */
  decision?: Decision;
  /** Decisions by the values of `keys` (or, for the simulator, by the whole context). */
  byContext: Map<string, Decision>;
}

interface PolicyState {
  compiled?: CompiledPolicy;
  targets: Map<string, Target>;
  size: number;
}

export function policyEvaluator(options: EvaluatorOptions = {}): PolicyEvaluator {
  const engine = options.engine ?? "compiled";
  const cache = options.cache ?? true;
  const states = new WeakMap<PolicyDocument, PolicyState>();

  const stateOf = (policy: PolicyDocument): PolicyState => {
    let state = states.get(policy);
    if (!state) {
      const compiled = engine === "compiled" ? compilePolicy(policy) : undefined;
      state = {
        compiled: compiled && "statements" in compiled ? compiled : undefined,
        targets: new Map(),
        size: 0,
      };
      states.set(policy, state);
    }
    return state;
  };

  const targetOf = (state: PolicyState, principalArn: string, account: string, a: Authorization): Target => {
    const statements =
      state.compiled && compiledCase(principalArn, account, a)
        ? applicableStatements(state.compiled, a.action, a.resource)
        : undefined;
    return { statements, keys: statements ? keysRead(statements) : [], byContext: new Map() };
  };

  const decide = (
    target: Target,
    principalArn: string,
    account: string,
    policy: PolicyDocument,
    a: Authorization,
  ) => {
    const context = target.statements ? contextOf(a.context) : undefined;
    if (!target.statements || !context) return simulate(principalArn, account, policy, a);
    return serviceRules(a, identityDecision(target.statements, context));
  };

  /** Room for one more remembered decision: past MAX_DECISIONS the policy's memory starts again. */
  const room = (state: PolicyState, target?: Target) => {
    if (++state.size <= MAX_DECISIONS) return;
    state.targets.clear();
    target?.byContext.clear();
    state.size = 1;
  };

  const decision = (principalArn: string, account: string, policy: PolicyDocument, a: Authorization) => {
    const state = stateOf(policy);
    if (!cache) return decide(targetOf(state, principalArn, account, a), principalArn, account, policy, a);
    const id = `${principalArn}\n${account}\n${a.action}\n${a.resource}`;
    let target = state.targets.get(id);
    if (!target) {
      room(state);
      target = targetOf(state, principalArn, account, a);
      state.targets.set(id, target);
    }
    // No condition applies: the decision is the target's, whatever the context (if the matchers can read it).
    if (target.statements && target.keys.length === 0 && plainContext(a.context)) {
      target.decision ??= decide(target, principalArn, account, policy, a);
      return target.decision;
    }
    const key = target.statements ? contextKey(target.keys, a.context) : JSON.stringify(a.context);
    let known = target.byContext.get(key);
    if (known === undefined) {
      known = decide(target, principalArn, account, policy, a);
      room(state, target);
      state.targets.set(id, target);
      target.byContext.set(key, known);
    }
    return known;
  };

  return {
    firstDenial(principalArn, account, policy, auths) {
      if (policyProblem(policy) !== undefined)
        return auths.length ? { decision: "ImplicitlyDenied", authorization: auths[0] } : undefined;
      for (const authorization of auths) {
        const d = decision(principalArn, account, policy, authorization);
        if (d !== "Allowed") return { decision: d, authorization };
      }
      return undefined;
    },
  };
}

/** The values of `keys` in the context as the simulator reads them (case-insensitive keys, the last spelling). */
/** Is every context value a string or a list of strings (what the matchers read)? */
function plainContext(context: Authorization["context"]): boolean {
  for (const key in context) {
    const v = context[key];
    if (typeof v !== "string" && !(Array.isArray(v) && v.every((s) => typeof s === "string"))) return false;
  }
  return true;
}

function contextKey(keys: string[], context: Authorization["context"]): string {
  const lowered: Context | undefined = contextOf(context);
  // A context the matchers do not take is decided (and remembered) by the simulator under its whole self.
  if (!lowered) return `!${JSON.stringify(context)}`;
  return JSON.stringify(keys.map((k) => lowered.get(k) ?? null));
}

/**
 * Is the request one the compiled matchers decide: an authenticated principal of the resource's account (so
 * only the identity policy counts, and a KMS key's default policy delegates to it), a resource without wildcards,
 * an action the simulator reads as "service:Action", and no STS (whose authorizer differs)?
 */
function compiledCase(principalArn: string, account: string, a: Authorization): boolean {
  const p = principalArn.split(":");
  if (p.length < 6 || p[0] !== "arn" || !p[4] || p[4] !== account) return false;
  if (a.resource.includes("*")) return false;
  const service = a.action.split(":")[0].toLowerCase();
  if (service === "sts") return false;
  // The key policy is added for actions spelled "kms:…" only (simulate() below).
  if (service === "kms" && !a.action.startsWith("kms:")) return false;
  return true;
}

const MANAGED_POLICY_ACTIONS = new Set([
  "iam:createpolicy",
  "iam:createpolicyversion",
  "iam:deletepolicy",
  "iam:deletepolicyversion",
  "iam:setdefaultpolicyversion",
  "iam:tagpolicy",
  "iam:untagpolicy",
]);
const AWS_MANAGED_ROLE_ACTIONS = new Set([
  "iam:attachrolepolicy",
  "iam:createrole",
  "iam:createservicelinkedrole",
  "iam:deleterole",
  "iam:deleterolepermissionsboundary",
  "iam:deleterolepolicy",
  "iam:deleteservicelinkedrole",
  "iam:detachrolepolicy",
  "iam:passrole",
  "iam:putrolepermissionsboundary",
  "iam:putrolepolicy",
  "iam:tagrole",
  "iam:untagrole",
  "iam:updateassumerolepolicy",
  "iam:updaterole",
  "iam:updateroledescription",
]);
const KMS_ALIAS_ACTIONS = new Set(["kms:createalias", "kms:deletealias", "kms:updatealias"]);

/** What IAM and KMS refuse whatever the policies say (AWS-managed policies, roles and key aliases). */
function serviceRules(a: Authorization, identity: Decision): Decision {
  const action = a.action.toLowerCase();
  const parts = a.resource.split(":");
  const resource = parts.slice(5).join(":");
  if (action.startsWith("iam:")) {
    if (
      MANAGED_POLICY_ACTIONS.has(action) &&
      resource.toLowerCase().startsWith("policy/") &&
      parts[4] === "aws"
    )
      return "ImplicitlyDenied";
    if (AWS_MANAGED_ROLE_ACTIONS.has(action) && resource.toLowerCase().startsWith("role/aws-reserved/"))
      return "ImplicitlyDenied";
  }
  if (
    identity !== "ExplicitlyDenied" &&
    KMS_ALIAS_ACTIONS.has(action) &&
    resource
      .slice(0, "alias/aws/".length)
      .localeCompare("alias/aws/", undefined, { sensitivity: "accent" }) === 0
  )
    return "ImplicitlyDenied";
  return identity;
}

/**
 * A KMS key's own policy, which KMS requires besides the caller's: the default one (CDK's and the console's too),
 * delegating to the account's IAM policies.
 */
const keyPolicies = new Map<string, unknown>();
const keyPolicy = (account: string) => {
  if (!keyPolicies.has(account))
    keyPolicies.set(
      account,
      createValidatedPolicy(
        {
          Version: "2012-10-17",
          Statement: [
            {
              Effect: "Allow",
              Principal: { AWS: `arn:aws:iam::${account}:root` },
              Action: "kms:*",
              Resource: "*",
            },
          ],
        },
        validateResourcePolicy,
        { name: "default-key-policy" },
      ),
    );
  return keyPolicies.get(account);
};

/** The simulator's decision (what the compiled matchers reproduce, and decide nothing without). */
export function simulate(
  principalArn: string,
  account: string,
  policy: PolicyDocument,
  authorization: Authorization,
): Decision {
  return runUnsafeSimulation(
    {
      request: {
        principal: principalArn,
        action: authorization.action,
        resource: { resource: authorization.resource, accountId: account },
        contextVariables: authorization.context,
      },
      identityPolicies: [{ name: "runtime", policy }],
      // KMS requires the key's own policy to allow too; every key here has the default one.
      ...(authorization.action.startsWith("kms:") ? { resourcePolicy: keyPolicy(account) } : {}),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  ) as Decision;
}

const shared = policyEvaluator();

/** The first authorization the policy does not allow, or undefined when it allows them all (the shared evaluator). */
export function firstDenial(
  principalArn: string,
  account: string,
  policy: PolicyDocument,
  auths: Authorization[],
): Denial | undefined {
  return shared.firstDenial(principalArn, account, policy, auths);
}
