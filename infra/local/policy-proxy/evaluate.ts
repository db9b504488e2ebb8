import {
  createValidatedPolicy,
  validateIdentityPolicy,
  validateResourcePolicy,
} from "@cloud-copilot/iam-policy";
import { runUnsafeSimulation } from "@cloud-copilot/iam-simulate";
import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import type { Authorization } from "./refusal.ts";

// IAM evaluation by @cloud-copilot/iam-simulate. A runtime's policy is validated once (the first time it is
// seen), then each request is evaluated without validating it again (the simulator's "unsafe" entry point).
// Its decisions are remembered per policy: evaluation is a pure function of the request's action, resource and
// context, costs ~0.4 ms (mostly its case-insensitive compares), and a run repeats the same few keys.

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
      // KMS requires the key's own policy to allow too; every key here has the default one.
      ...(authorization.action.startsWith("kms:") ? { resourcePolicy: keyPolicy(account) } : {}),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  ) as Decision;
}
