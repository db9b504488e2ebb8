import {
  createValidatedPolicy,
  validateIdentityPolicy,
  validateResourcePolicy,
} from "@cloud-copilot/iam-policy";
import { runUnsafeSimulation } from "@cloud-copilot/iam-simulate";
import type { PolicyDocument } from "../../../shared/agent/runtime/policy.ts";
import type { Authorization, ResourcePolicy } from "./refusal.ts";

// IAM evaluation by @cloud-copilot/iam-simulate. A runtime's policy is validated once (the first time it is
// seen), then each request is evaluated without validating it again (the simulator's "unsafe" entry point).
// Its decisions are remembered per policy: evaluation is a pure function of the request's action, resource and
// context, costs ~0.4 ms (mostly its case-insensitive compares), and a run repeats the same few keys.

/**
 * Resource policies as the simulator takes them: pre-validated with a name (its unvalidated path loses the name a
 * resource policy's analysis reads).
 */
const loadedResourcePolicies = new WeakMap<ResourcePolicy, unknown>();
function loadedResourcePolicy(doc: ResourcePolicy): unknown {
  if (!loadedResourcePolicies.has(doc))
    loadedResourcePolicies.set(doc, createValidatedPolicy(doc, validateResourcePolicy, { name: "resource" }));
  return loadedResourcePolicies.get(doc);
}

export type Decision = "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied";

const validated = new WeakMap<PolicyDocument, string | undefined>();
const decisions = new WeakMap<PolicyDocument, Map<string, Decision>>();
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

export interface Denial {
  decision: Exclude<Decision, "Allowed">;
  authorization: Authorization;
}

/** The first authorization the policy does not allow, or undefined when it allows them all. */
export function firstDenial(
  principalArn: string,
  account: string,
  policy: PolicyDocument,
  auths: Authorization[],
): Denial | undefined {
  if (policyProblem(policy) !== undefined)
    return auths.length ? { decision: "ImplicitlyDenied", authorization: auths[0] } : undefined;
  const memory = decisions.get(policy) ?? new Map<string, Decision>();
  decisions.set(policy, memory);
  for (const authorization of auths) {
    const key = JSON.stringify([
      principalArn,
      account,
      authorization.action,
      authorization.resource,
      authorization.context,
    ]);
    let decision = memory.get(key);
    if (decision === undefined) {
      decision = evaluate(principalArn, account, policy, authorization);
      if (memory.size >= MAX_DECISIONS) memory.clear();
      memory.set(key, decision);
    }
    if (decision !== "Allowed") return { decision, authorization };
  }
  return undefined;
}

function evaluate(
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
      ...(authorization.resourcePolicy
        ? { resourcePolicy: loadedResourcePolicy(authorization.resourcePolicy) }
        : {}),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  ) as Decision;
}
