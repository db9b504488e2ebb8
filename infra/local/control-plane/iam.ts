import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import { awsError } from "../sfn.ts";
import { JsonStore } from "./json-store.ts";
import { type XmlValue, xmlDocument } from "./xml.ts";

// The local IAM: roles (with a path, a permissions boundary and inline policies) as the deploy step makes them for
// deployments' runtimes, over IAM's Query protocol (form-encoded Action=…, XML answers) so the AWS SDK's IAM client
// works unchanged. Managed policies are the platform's own (the runtime boundary), given at start, never created.

export interface LocalRole {
  RoleName: string;
  Path: string;
  RoleId: string;
  Arn: string;
  CreateDate: string;
  AssumeRolePolicyDocument: string;
  Description?: string;
  PermissionsBoundary?: string;
  /** Inline policies by name: their documents as given. */
  policies: Record<string, string>;
}

interface IamData {
  roles: Record<string, LocalRole>;
}

const NAME = /^[\w+=,.@-]{1,64}$/;
const POLICY_NAME = /^[\w+=,.@-]{1,128}$/;
const PATH = /^(\/|\/[\u0021-\u007F]{1,510}\/)$/;

const validation = (member: string, value: string, constraint: string) =>
  awsError(
    "ValidationError",
    `1 validation error detected: Value '${value}' at '${member}' failed to satisfy constraint: ${constraint}`,
    400,
  );
const noSuchRole = (name: string) =>
  awsError("NoSuchEntity", `The role with name ${name} cannot be found.`, 404);

function required(params: URLSearchParams, member: string): string {
  const v = params.get(member);
  if (!v)
    throw validation(member.charAt(0).toLowerCase() + member.slice(1), "null", "Member must not be null");
  return v;
}

function roleName(params: URLSearchParams): string {
  const name = required(params, "RoleName");
  if (!NAME.test(name))
    throw validation("roleName", name, "Member must satisfy regular expression pattern: [\\w+=,.@-]+");
  return name;
}

/** A policy document IAM takes: JSON with a Statement. */
function policyDocument(text: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw awsError("MalformedPolicyDocument", "This policy contains invalid Json", 400);
  }
  if (typeof doc !== "object" || doc === null || !("Statement" in doc))
    throw awsError("MalformedPolicyDocument", "Syntax errors in policy.", 400);
  return text;
}

export class LocalIam {
  private readonly store: JsonStore<IamData>;
  constructor(
    private readonly opts: {
      dataDir?: string;
      account: string;
      /** The account's managed policies by ARN (the runtime boundary). */
      managedPolicies: Record<string, PolicyDocument>;
    },
  ) {
    this.store = new JsonStore(opts.dataDir && join(opts.dataDir, "aws", "iam.json"), () => ({ roles: {} }));
  }

  role(name: string): LocalRole | undefined {
    return Object.hasOwn(this.store.data.roles, name) ? this.store.data.roles[name] : undefined;
  }

  /** A role named by its ARN (what Lambda's CreateFunction is given). */
  roleOfArn(arn: string): LocalRole | undefined {
    const name = /^arn:aws:iam::\d{12}:role\/(?:.*\/)?([\w+=,.@-]+)$/.exec(arn)?.[1];
    const role = name ? this.role(name) : undefined;
    return role?.Arn === arn ? role : undefined;
  }

  managedPolicy(arn: string): PolicyDocument | undefined {
    return Object.hasOwn(this.opts.managedPolicies, arn) ? this.opts.managedPolicies[arn] : undefined;
  }

  /** One Query-protocol call: its XML answer. */
  handle(params: URLSearchParams): string {
    const action = params.get("Action") ?? "";
    const result = this.call(action, params);
    return xmlDocument(`${action}Response`, {
      ...(result === undefined ? {} : { [`${action}Result`]: result }),
      ResponseMetadata: { RequestId: randomUUID() },
    });
  }

  private call(action: string, params: URLSearchParams): Record<string, XmlValue> | undefined {
    switch (action) {
      case "CreateRole":
        return { Role: roleXml(this.createRole(params)) };
      case "GetRole":
        return { Role: roleXml(this.existing(roleName(params))) };
      case "DeleteRole":
        return void this.deleteRole(roleName(params));
      case "PutRolePolicy":
        return void this.putRolePolicy(params);
      case "GetRolePolicy": {
        const name = roleName(params);
        const policy = required(params, "PolicyName");
        const doc = this.existing(name).policies[policy];
        if (doc === undefined)
          throw awsError("NoSuchEntity", `The role policy with name ${policy} cannot be found.`, 404);
        return { RoleName: name, PolicyName: policy, PolicyDocument: encodeURIComponent(doc) };
      }
      case "ListRolePolicies":
        return {
          PolicyNames: Object.keys(this.existing(roleName(params)).policies).map((n) => ({ member: n })),
          IsTruncated: false,
        };
      case "DeleteRolePolicy":
        return void this.deleteRolePolicy(roleName(params), required(params, "PolicyName"));
      case "PutRolePermissionsBoundary":
        return void this.setBoundary(
          roleName(params),
          this.boundary(required(params, "PermissionsBoundary")),
        );
      case "DeleteRolePermissionsBoundary":
        return void this.setBoundary(roleName(params), undefined);
      default:
        throw awsError("InvalidAction", `Could not find operation ${action} for version 2010-05-08`, 400);
    }
  }

  private existing(name: string): LocalRole {
    const role = this.role(name);
    if (!role) throw noSuchRole(name);
    return role;
  }

  private boundary(arn: string): string {
    if (!this.managedPolicy(arn))
      throw awsError("NoSuchEntity", `Scope ARN: ${arn} does not exist or is not attachable.`, 404);
    return arn;
  }

  private createRole(params: URLSearchParams): LocalRole {
    const RoleName = roleName(params);
    const Path = params.get("Path") ?? "/";
    if (!PATH.test(Path))
      throw validation(
        "path",
        Path,
        "Member must satisfy regular expression pattern: (\\u002F)|(\\u002F[\\u0021-\\u007E]+\\u002F)",
      );
    const AssumeRolePolicyDocument = policyDocument(required(params, "AssumeRolePolicyDocument"));
    const boundary = params.get("PermissionsBoundary");
    const role: LocalRole = {
      RoleName,
      Path,
      RoleId: `AROA${randomBytes(8).toString("hex").toUpperCase()}`,
      Arn: `arn:aws:iam::${this.opts.account}:role${Path}${RoleName}`,
      CreateDate: new Date().toISOString(),
      AssumeRolePolicyDocument,
      ...(params.get("Description") ? { Description: params.get("Description")! } : {}),
      ...(boundary ? { PermissionsBoundary: this.boundary(boundary) } : {}),
      policies: {},
    };
    return this.store.update((d) => {
      // IAM role names are unique in an account whatever their case.
      if (Object.keys(d.roles).some((n) => n.toLowerCase() === RoleName.toLowerCase()))
        throw awsError("EntityAlreadyExists", `Role with name ${RoleName} already exists.`, 409);
      d.roles[RoleName] = role;
      return role;
    });
  }

  private deleteRole(name: string): void {
    this.store.update((d) => {
      const role = d.roles[name];
      if (!Object.hasOwn(d.roles, name)) throw noSuchRole(name);
      if (Object.keys(role.policies).length)
        throw awsError("DeleteConflict", "Cannot delete entity, must delete policies first.", 409);
      delete d.roles[name];
    });
  }

  private putRolePolicy(params: URLSearchParams): void {
    const name = roleName(params);
    const policy = required(params, "PolicyName");
    if (!POLICY_NAME.test(policy))
      throw validation("policyName", policy, "Member must satisfy regular expression pattern: [\\w+=,.@-]+");
    const doc = policyDocument(required(params, "PolicyDocument"));
    this.store.update((d) => {
      if (!Object.hasOwn(d.roles, name)) throw noSuchRole(name);
      d.roles[name].policies[policy] = doc;
    });
  }

  private deleteRolePolicy(name: string, policy: string): void {
    this.store.update((d) => {
      if (!Object.hasOwn(d.roles, name)) throw noSuchRole(name);
      if (!Object.hasOwn(d.roles[name].policies, policy))
        throw awsError("NoSuchEntity", `The role policy with name ${policy} cannot be found.`, 404);
      delete d.roles[name].policies[policy];
    });
  }

  private setBoundary(name: string, arn: string | undefined): void {
    this.store.update((d) => {
      if (!Object.hasOwn(d.roles, name)) throw noSuchRole(name);
      if (arn) d.roles[name].PermissionsBoundary = arn;
      else delete d.roles[name].PermissionsBoundary;
    });
  }
}

/** A role as IAM's XML answers it (its trust policy URL-encoded, as IAM returns policy documents). */
function roleXml(r: LocalRole): Record<string, XmlValue> {
  return {
    Path: r.Path,
    RoleName: r.RoleName,
    RoleId: r.RoleId,
    Arn: r.Arn,
    CreateDate: r.CreateDate,
    AssumeRolePolicyDocument: encodeURIComponent(r.AssumeRolePolicyDocument),
    ...(r.Description ? { Description: r.Description } : {}),
    MaxSessionDuration: 3600,
    ...(r.PermissionsBoundary
      ? {
          PermissionsBoundary: {
            PermissionsBoundaryType: "PermissionsBoundaryPolicy",
            PermissionsBoundaryArn: r.PermissionsBoundary,
          },
        }
      : {}),
  };
}

/** IAM's error answer (the Query protocol's ErrorResponse, which the SDK reads the Code of). */
export function iamErrorXml(code: string, message: string): string {
  return xmlDocument("ErrorResponse", {
    Error: { Type: "Sender", Code: code, Message: message },
    RequestId: randomUUID(),
  });
}
