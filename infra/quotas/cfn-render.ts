import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// The synthesized templates of a cloud assembly (stacks and nested stacks) and their values rendered as AWS would
// store them: each CloudFormation token (Ref, GetAtt, Join, ImportValue…) becomes a string of the length its value
// takes at most, so a size computed here is not smaller than the deployed one.

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  /** What CloudFormation does with it when its stack is deleted (Delete when absent). */
  DeletionPolicy?: string;
}

export interface CfnTemplate {
  Resources?: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
  Parameters?: Record<string, unknown>;
}

export interface SynthTemplate {
  /** The template's file name without .template.json (a nested stack's ends with .nested). */
  name: string;
  template: CfnTemplate;
  /** Bytes of the template file. */
  bytes: number;
  /** A nested template's asset hash: its parent's stack resource names it in TemplateURL. */
  asset?: string;
}

/** Every template of an assembly directory (top-level and nested stacks). */
export function loadTemplates(dir: string): SynthTemplate[] {
  const files = readdirSync(dir);
  const assets = new Map<string, string>();
  for (const f of files.filter((f) => f.endsWith(".assets.json"))) {
    const manifest = JSON.parse(readFileSync(join(dir, f), "utf8")) as {
      files?: Record<string, { source: { path?: string } }>;
    };
    for (const [hash, file] of Object.entries(manifest.files ?? {}))
      if (file.source.path) assets.set(file.source.path, hash);
  }
  return files
    .filter((f) => f.endsWith(".template.json"))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), "utf8");
      const name = f.replace(/\.template\.json$/, "");
      return { name, template: JSON.parse(text), bytes: Buffer.byteLength(text), asset: assets.get(f) };
    });
}

const REGION = "ap-southeast-2"; // as long as any region's name
const ACCOUNT = "123456789012";
const PSEUDO: Record<string, string> = {
  "AWS::Region": REGION,
  "AWS::AccountId": ACCOUNT,
  "AWS::Partition": "aws",
  "AWS::URLSuffix": "amazonaws.com",
  "AWS::StackName": "s".repeat(128),
  "AWS::StackId": `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${"s".repeat(128)}/${"0".repeat(36)}`,
  "AWS::NoValue": "",
};
/** What a Ref of a resource returns, at its longest (a name CloudFormation generates is ≤ 64 characters here). */
const REF_LENGTH: Record<string, number> = {
  "AWS::ApiGateway::RestApi": 10,
  "AWS::ApiGatewayV2::Api": 10,
  "AWS::ApiGateway::Resource": 10,
  "AWS::ApiGateway::Deployment": 10,
  "AWS::ApiGateway::Stage": 128,
  "AWS::KMS::Key": 36,
  "AWS::S3::Bucket": 63,
};
const ARN_PREFIX = `arn:aws:service:${REGION}:${ACCOUNT}:resource:`;

/** Renders CloudFormation values of the templates of one assembly. */
export class CfnRenderer {
  private readonly byName = new Map<string, SynthTemplate>();
  /** A nested template's parent and the Parameters its stack resource passes. */
  private readonly parents = new Map<string, { parent: string; parameters: Record<string, unknown> }>();
  private readonly exports = new Map<string, { template: string; value: unknown }>();

  constructor(readonly templates: SynthTemplate[]) {
    for (const t of templates) this.byName.set(t.name, t);
    const nested = templates.filter((t) => t.asset);
    for (const t of templates) {
      for (const r of Object.values(t.template.Resources ?? {})) {
        if (r.Type !== "AWS::CloudFormation::Stack") continue;
        const url = this.text(r.Properties?.TemplateURL, t.name);
        const child = nested.find((n) => url.includes(`${n.asset}.json`));
        if (child)
          this.parents.set(child.name, {
            parent: t.name,
            parameters: (r.Properties?.Parameters ?? {}) as Record<string, unknown>,
          });
      }
      for (const o of Object.values(t.template.Outputs ?? {}))
        if (o.Export)
          this.exports.set(this.text(o.Export.Name, t.name), { template: t.name, value: o.Value });
    }
  }

  resources(template: string): Record<string, CfnResource> {
    return this.byName.get(template)?.template.Resources ?? {};
  }

  /** A value as a string, tokens rendered. */
  text(value: unknown, template: string): string {
    const v = this.value(value, template);
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  /** A value (object, list or scalar) with every token rendered. */
  value(value: unknown, template: string): unknown {
    if (Array.isArray(value)) return value.map((v) => this.value(v, template));
    if (value === null || typeof value !== "object") return value;
    const entries = Object.entries(value);
    if (entries.length === 1 && (entries[0][0] === "Ref" || entries[0][0].startsWith("Fn::")))
      return this.intrinsic(entries[0][0], entries[0][1], template);
    return Object.fromEntries(entries.map(([k, v]) => [k, this.value(v, template)]));
  }

  /** What a value refers to, the same for every way of referring to it (Ref, GetAtt, a parameter, an import). */
  identity(value: unknown, template: string): string {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      const v = value as Record<string, unknown>;
      const logical =
        typeof v.Ref === "string" ? v.Ref : Array.isArray(v["Fn::GetAtt"]) ? v["Fn::GetAtt"][0] : undefined;
      if (typeof logical === "string") {
        const parent = this.parents.get(template);
        if (parent && Object.hasOwn(parent.parameters, logical))
          return this.identity(parent.parameters[logical], parent.parent);
        if (this.resources(template)[logical]) return `${template}/${logical}`;
      }
      if (v["Fn::ImportValue"] !== undefined) {
        const exp = this.exports.get(this.text(v["Fn::ImportValue"], template));
        if (exp) return this.identity(exp.value, exp.template);
      }
    }
    return this.text(value, template);
  }

  /** A resource's construct path (from its metadata), else its stack (a nested one's hash left out) and logical id. */
  label(identity: string): string {
    const [template, logical] = identity.split("/");
    const path = this.resources(template)[logical]?.Metadata?.["aws:cdk:path"];
    if (typeof path === "string") return path.replace(/\/Resource$/, "");
    return logical ? `${template.replace(/[0-9A-F]{8}\.nested$/, "")}/${logical}` : identity;
  }

  private intrinsic(fn: string, arg: unknown, template: string): unknown {
    switch (fn) {
      case "Ref":
        return this.ref(String(arg), template);
      case "Fn::GetAtt": {
        const [logical, attr] = Array.isArray(arg) ? arg : String(arg).split(".");
        return this.getAtt(String(logical), String(attr), template);
      }
      case "Fn::Join": {
        const [sep, parts] = arg as [string, unknown[]];
        const list = this.value(parts, template);
        return (Array.isArray(list) ? list : [list])
          .map((p) => (typeof p === "string" ? p : JSON.stringify(p)))
          .join(sep);
      }
      case "Fn::Sub": {
        const [text, vars] = Array.isArray(arg) ? arg : [arg, {}];
        return String(text).replace(/\$\{([^}]+)\}/g, (_m, name: string) =>
          Object.hasOwn(vars, name)
            ? this.text(vars[name], template)
            : name.includes(".")
              ? this.text({ "Fn::GetAtt": name.split(".") }, template)
              : this.text({ Ref: name }, template),
        );
      }
      case "Fn::Select": {
        const [index, list] = arg as [number, unknown];
        const items = this.value(list, template);
        return Array.isArray(items) ? (items[Number(index)] ?? "") : "x".repeat(64);
      }
      case "Fn::Split": {
        const [sep, text] = arg as [string, unknown];
        return this.text(text, template).split(sep);
      }
      case "Fn::If": {
        const [, a, b] = arg as [string, unknown, unknown];
        const [x, y] = [this.text(a, template), this.text(b, template)];
        return x.length >= y.length ? this.value(a, template) : this.value(b, template);
      }
      case "Fn::ImportValue": {
        const exp = this.exports.get(this.text(arg, template));
        return exp ? this.value(exp.value, exp.template) : ARN_PREFIX + "x".repeat(64);
      }
      case "Fn::Base64":
        return Buffer.from(this.text(arg, template)).toString("base64");
      default:
        return "x".repeat(64);
    }
  }

  private ref(name: string, template: string): string {
    if (Object.hasOwn(PSEUDO, name)) return PSEUDO[name];
    const parent = this.parents.get(template);
    if (parent && Object.hasOwn(parent.parameters, name))
      return this.text(parent.parameters[name], parent.parent);
    const resource = this.resources(template)[name];
    if (!resource) return ARN_PREFIX + "x".repeat(64); // a parameter given at deploy time: an ARN at most
    if (resource.Type === "AWS::StepFunctions::StateMachine" || resource.Type === "AWS::SNS::Topic")
      return ARN_PREFIX + "x".repeat(80); // their Ref is an ARN
    return "x".repeat(REF_LENGTH[resource.Type] ?? 64);
  }

  private getAtt(logical: string, attr: string, template: string): string {
    if (attr === "Arn" || attr.endsWith("Arn")) return ARN_PREFIX + "x".repeat(64);
    const resource = this.resources(template)[logical];
    if (!resource) return "x".repeat(64);
    if (attr === "RootResourceId") return "x".repeat(10);
    return "x".repeat(128);
  }
}
