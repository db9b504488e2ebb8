import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type App, Stack } from "aws-cdk-lib";
import { CfnRole } from "aws-cdk-lib/aws-iam";
import { beforeAll, describe, expect, it } from "vitest";
import { renderedRoleOf } from "../stacks/role-policies.ts";
import { synthesizedApp } from "../stacks/synthesized-app.ts";
import { renderRole } from "./render.ts";
import { appShape, platformRoles } from "./roles.ts";

// Issue 26 (2): the platform functions' roles come from one source (roles.ts) that the CDK app and the local cloud
// both render. Whatever a stack grants a role beyond it (a grant* call, an addToPolicy) makes this fail.

type Json = any;
interface Template {
  Resources: Record<string, { Type: string; Properties?: Json }>;
}

/** A policy document's statements as sorted (effect, action, resource, condition) tuples. */
function tuples(statements: Json[]): string[] {
  const out = new Set<string>();
  for (const st of statements)
    for (const action of [st.Action].flat())
      for (const resource of [st.Resource].flat())
        out.add(JSON.stringify([st.Effect, action, resource, st.Condition ?? null]));
  return [...out].sort();
}

const refsRole = (roles: Json[] | undefined, id: string) => (roles ?? []).some((r) => r?.Ref === id);

/** Every statement the template gives role `id`: inline, its AWS::IAM::Policy resources, managed policies of the template. */
function synthesizedStatements(t: Template, id: string): Json[] {
  const role = t.Resources[id].Properties ?? {};
  const out: Json[] = (role.Policies ?? []).flatMap((p: Json) => p.PolicyDocument.Statement);
  const attached = new Set(
    (role.ManagedPolicyArns ?? []).filter((a: Json) => a?.Ref).map((a: Json) => a.Ref as string),
  );
  for (const [rid, r] of Object.entries(t.Resources)) {
    if (r.Type === "AWS::IAM::Policy" && refsRole(r.Properties.Roles, id))
      out.push(...r.Properties.PolicyDocument.Statement);
    if (r.Type === "AWS::IAM::ManagedPolicy" && (attached.has(rid) || refsRole(r.Properties.Roles, id)))
      out.push(...r.Properties.PolicyDocument.Statement);
  }
  return out;
}

let app: App;
const templates = new Map<string, Template>();
const templateOf = (stack: Stack): Template => {
  const file = join(app.outdir, stack.templateFile);
  if (!templates.has(file)) templates.set(file, JSON.parse(readFileSync(file, "utf8")));
  return templates.get(file)!;
};

beforeAll(async () => {
  ({ app } = await synthesizedApp());
}, 600_000);

describe("the platform roles of the synthesized app", () => {
  it("are exactly the roles of the source, each with its source's statements and the logs policy only", () => {
    const sources = platformRoles(appShape());
    const seen: string[] = [];
    for (const c of app.node.findAll()) {
      const rendered = renderedRoleOf(c);
      if (!rendered) continue;
      seen.push(rendered.id);
      const stack = Stack.of(c);
      const cfn = c.node.defaultChild as CfnRole;
      const logicalId = stack.resolve(cfn.logicalId) as string;
      const template = templateOf(stack);
      const expected = stack.resolve(renderRole(sources.get(rendered.id)!, rendered.arns));
      expect(tuples(synthesizedStatements(template, logicalId)), rendered.id).toEqual(tuples(expected));
      const managed = JSON.stringify(template.Resources[logicalId].Properties.ManagedPolicyArns);
      expect(managed, rendered.id).toMatch(
        /^\[\{"Fn::Join":\["",\["arn:",\{"Ref":"AWS::Partition"\},":iam::aws:policy\/service-role\/AWSLambdaBasicExecutionRole"\]\]\}\]$/,
      );
    }
    expect(seen.sort()).toEqual([...sources.keys()].sort());
  });

  it("run every platform function: each Lambda role of the app is a source role (but CDK's own providers')", () => {
    for (const c of app.node.findAll()) {
      if (!(c instanceof CfnRole)) continue;
      const trust = JSON.stringify(Stack.of(c).resolve(c.assumeRolePolicyDocument));
      if (!trust.includes("lambda.amazonaws.com")) continue;
      // CDK's BucketDeployment (the console's files) brings its own provider function and role.
      if (c.node.path.includes("Custom::CDKBucketDeployment")) continue;
      expect(renderedRoleOf(c.node.scope!), c.node.path).toBeDefined();
    }
  });
});
