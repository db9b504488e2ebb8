import { describe, expect, it } from "vitest";
import { platformFunctions } from "../build/function-bundles.ts";
import { platformRoles } from "../policies/roles.ts";
import { platformPrincipals, principalOf, roleOfFunction } from "./platform-roles.ts";
import { policyProblem } from "./policy-proxy/evaluate.ts";

// Issue 26 (2): the local cloud renders the platform roles without a synth; each must be a policy the proxy's
// evaluator accepts (one it rejects would deny every call), and every platform function must have its role.
describe("the platform roles on the local cloud", () => {
  const principals = platformPrincipals();

  it("renders every role of the source as a valid identity policy, with a key pair of its own", () => {
    expect([...principals.keys()].sort()).toEqual([...platformRoles().keys()].sort());
    for (const [role, p] of principals) expect(policyProblem(p.policy), role).toBeUndefined();
    const keys = new Set([...principals.values()].map((p) => p.accessKeyId));
    expect(keys.size).toBe(principals.size);
    const lookup = principalOf(principals);
    for (const p of principals.values()) expect(lookup(p.accessKeyId)).toBe(p);
    expect(lookup("AKIAUNKNOWN")).toBeUndefined();
  });

  it("gives every platform function but the agent runtime a role of the source", () => {
    for (const fn of platformFunctions()) {
      const role = roleOfFunction(fn.id);
      if (fn.kind === "runtime") expect(role, fn.id).toBeUndefined();
      else expect(role && principals.has(role), fn.id).toBe(true);
    }
    expect(roleOfFunction("Task-RunRetentionCleanup")).toBe("task-RunRetentionCleanup");
    expect(roleOfFunction("Task-RuntimeRemove")).toBe("deploy");
    expect(roleOfFunction("AgentRouter")).toBe("api-agent");
    expect(roleOfFunction("NoSuchFunction")).toBeUndefined();
  });
});
