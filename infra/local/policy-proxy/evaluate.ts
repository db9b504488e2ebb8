import { validateIdentityPolicy } from "@cloud-copilot/iam-policy";
import { runUnsafeSimulation } from "@cloud-copilot/iam-simulate";
import type { PolicyDocument } from "../../../shared/agent/runtime/policy.ts";
import type { Authorization } from "./refusal.ts";

// IAM evaluation by @cloud-copilot/iam-simulate. A runtime's policy is validated once (the first time it is
// seen), then each request is evaluated without validating it again (the simulator's "unsafe" entry point).

export type Decision = "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied";

const validated = new WeakMap<PolicyDocument, string | undefined>();

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
  for (const authorization of auths) {
    const decision = runUnsafeSimulation(
      {
        request: {
          principal: principalArn,
          action: authorization.action,
          resource: { resource: authorization.resource, accountId: account },
          contextVariables: authorization.context,
        },
        identityPolicies: [{ name: "runtime", policy }],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
      },
      {},
    ) as Decision;
    if (decision !== "Allowed") return { decision, authorization };
  }
  return undefined;
}
