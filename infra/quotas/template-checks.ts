import { type AslStates, mapStates } from "../state-machines/asl.ts";
import { CfnRenderer, type SynthTemplate } from "./cfn-render.ts";
import { historyBounds, type WorkflowBounds } from "./history.ts";
import { type QuotaRow, quotaRow } from "./quota-row.ts";

// AWS's quotas checked against the synthesized templates of every stack and nested stack, before any deploy.

const LAMBDA_DOC = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html";
const IAM_DOC = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html";
const CFN_DOC = "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html";
const REST_DOC =
  "https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html";
const HTTP_DOC = "https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html";
const SFN_DOC = "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html";
const INLINE_MAP_DOC = "https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html";
const DIST_MAP_DOC = "https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html";

const RESOURCE_POLICY_BYTES = 20_480; // Lambda quotas: function resource-based policy, 20 KB (hard)
const ENVIRONMENT_BYTES = 4_096; // Lambda quotas: environment variables, 4 KB in all (hard)
const ROLE_INLINE_CHARS = 10_240; // IAM quotas: role policy size, aggregate of inline policies, non-whitespace characters
const MANAGED_POLICY_CHARS = 6_144; // IAM quotas: managed policy size, non-whitespace characters
const STACK_RESOURCES = 500; // CloudFormation quotas: resources per stack
const TEMPLATE_BYTES = 1_000_000; // CloudFormation quotas: template body size in an S3 object, 1 MB
const REST_RESOURCES = 300; // API Gateway REST API quotas: resources per API (default)
const HTTP_ROUTES = 300; // API Gateway HTTP API quotas: routes per API (default)
const HTTP_INTEGRATIONS = 300; // API Gateway HTTP API quotas: integrations per API (hard)
const INLINE_MAP_CONCURRENCY = 40; // Step Functions inline Map: up to 40 concurrent iterations
const DISTRIBUTED_MAP_CONCURRENCY = 10_000; // Step Functions Distributed Map: up to 10,000 parallel child executions
const HISTORY_EVENTS = 25_000; // Step Functions quotas: execution history, 25,000 events (hard)

export interface TemplateCheckOptions {
  /** Worst-case bounds per state machine, keyed by its ASL name (infra/quotas/workflow-bounds.ts). */
  workflows?: Record<string, WorkflowBounds>;
  /** A state machine's ASL name from its StateMachineName (default: the name itself). */
  aslName?: (stateMachineName: string) => string;
}

/** Every template quota row of an assembly's templates. */
export function templateQuotaRows(
  templates: SynthTemplate[],
  options: TemplateCheckOptions = {},
): QuotaRow[] {
  const cfn = new CfnRenderer(templates);
  return [
    ...resourcePolicyRows(cfn),
    ...environmentRows(cfn),
    ...rolePolicyRows(cfn),
    ...stackRows(templates),
    ...apiRows(cfn),
    ...stateMachineRows(cfn, options),
  ];
}

/** Resources of one type in every template, with the template they are in. */
function eachResource(cfn: CfnRenderer, type: string) {
  return cfn.templates.flatMap((t) =>
    Object.entries(cfn.resources(t.name))
      .filter(([, r]) => r.Type === type)
      .map(([logical, r]) => ({ template: t.name, logical, props: r.Properties ?? {} })),
  );
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}

const STATEMENT_ID = "s".repeat(100); // CloudFormation names each permission's statement; Lambda allows 100 characters

/** Each function's resource-based policy: its AWS::Lambda::Permission statements as Lambda stores them. */
function resourcePolicyRows(cfn: CfnRenderer): QuotaRow[] {
  const perms = eachResource(cfn, "AWS::Lambda::Permission");
  const byFunction = groupBy(perms, (p) => cfn.identity(p.props.FunctionName, p.template));
  return [...byFunction].map(([fn, list]) => {
    const statements = list.map(({ props, template }) => {
      const principal = cfn.text(props.Principal, template);
      const condition: Record<string, Record<string, string>> = {};
      if (props.SourceArn) condition.ArnLike = { "AWS:SourceArn": cfn.text(props.SourceArn, template) };
      if (props.SourceAccount)
        condition.StringEquals = { "AWS:SourceAccount": cfn.text(props.SourceAccount, template) };
      if (props.FunctionUrlAuthType)
        condition.StringEquals = {
          ...condition.StringEquals,
          "lambda:FunctionUrlAuthType": cfn.text(props.FunctionUrlAuthType, template),
        };
      return {
        Sid: STATEMENT_ID,
        Effect: "Allow",
        Principal: principal.endsWith(".amazonaws.com") ? { Service: principal } : { AWS: principal },
        Action: cfn.text(props.Action, template),
        Resource: cfn.text({ "Fn::GetAtt": ["Function", "Arn"] }, template),
        ...(Object.keys(condition).length ? { Condition: condition } : {}),
      };
    });
    const policy = JSON.stringify({ Version: "2012-10-17", Id: "default", Statement: statements });
    return quotaRow(
      "Lambda resource-based policy (bytes)",
      cfn.label(fn),
      Buffer.byteLength(policy),
      RESOURCE_POLICY_BYTES,
      LAMBDA_DOC,
    );
  });
}

function environmentRows(cfn: CfnRenderer): QuotaRow[] {
  return eachResource(cfn, "AWS::Lambda::Function").map(({ template, logical, props }) => {
    const vars = (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const bytes = Object.entries(vars).reduce(
      (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(cfn.text(v, template)),
      0,
    );
    return quotaRow(
      "Lambda environment variables (bytes)",
      cfn.label(`${template}/${logical}`),
      bytes,
      ENVIRONMENT_BYTES,
      LAMBDA_DOC,
    );
  });
}

/** IAM counts a policy's characters without white space. */
const policyChars = (doc: unknown) => JSON.stringify(doc).replace(/\s/g, "").length;

function rolePolicyRows(cfn: CfnRenderer): QuotaRow[] {
  const inline = new Map<string, number>();
  const add = (role: string, chars: number) => inline.set(role, (inline.get(role) ?? 0) + chars);
  for (const { template, logical, props } of eachResource(cfn, "AWS::IAM::Role")) {
    add(`${template}/${logical}`, 0);
    for (const p of (props.Policies ?? []) as { PolicyDocument: unknown }[])
      add(`${template}/${logical}`, policyChars(cfn.value(p.PolicyDocument, template)));
  }
  for (const { template, props } of eachResource(cfn, "AWS::IAM::Policy")) {
    const chars = policyChars(cfn.value(props.PolicyDocument, template));
    for (const role of (props.Roles ?? []) as unknown[]) add(cfn.identity(role, template), chars);
  }
  const managed = eachResource(cfn, "AWS::IAM::ManagedPolicy").map(({ template, logical, props }) =>
    quotaRow(
      "IAM managed policy (characters)",
      cfn.label(`${template}/${logical}`),
      policyChars(cfn.value(props.PolicyDocument, template)),
      MANAGED_POLICY_CHARS,
      IAM_DOC,
    ),
  );
  return [
    ...[...inline].map(([role, chars]) =>
      quotaRow("IAM role inline policies (characters)", cfn.label(role), chars, ROLE_INLINE_CHARS, IAM_DOC),
    ),
    ...managed,
  ];
}

function stackRows(templates: SynthTemplate[]): QuotaRow[] {
  return templates.flatMap((t) => [
    quotaRow(
      "CloudFormation resources per stack",
      t.name,
      Object.keys(t.template.Resources ?? {}).length,
      STACK_RESOURCES,
      CFN_DOC,
    ),
    quotaRow("CloudFormation template size (bytes)", t.name, t.bytes, TEMPLATE_BYTES, CFN_DOC),
  ]);
}

function apiRows(cfn: CfnRenderer): QuotaRow[] {
  const count = (type: string, key: string) =>
    groupBy(eachResource(cfn, type), (r) => cfn.identity(r.props[key], r.template));
  const rest = eachResource(cfn, "AWS::ApiGateway::RestApi").map((api) => `${api.template}/${api.logical}`);
  const resources = count("AWS::ApiGateway::Resource", "RestApiId");
  const http = eachResource(cfn, "AWS::ApiGatewayV2::Api").map((api) => `${api.template}/${api.logical}`);
  const routes = count("AWS::ApiGatewayV2::Route", "ApiId");
  const integrations = count("AWS::ApiGatewayV2::Integration", "ApiId");
  return [
    // The root resource counts too.
    ...rest.map((api) =>
      quotaRow(
        "REST API resources per API",
        cfn.label(api),
        1 + (resources.get(api)?.length ?? 0),
        REST_RESOURCES,
        REST_DOC,
      ),
    ),
    ...http.flatMap((api) => [
      quotaRow(
        "HTTP API routes per API",
        cfn.label(api),
        routes.get(api)?.length ?? 0,
        HTTP_ROUTES,
        HTTP_DOC,
      ),
      quotaRow(
        "HTTP API integrations per API",
        cfn.label(api),
        integrations.get(api)?.length ?? 0,
        HTTP_INTEGRATIONS,
        HTTP_DOC,
      ),
    ]),
  ];
}

function stateMachineRows(cfn: CfnRenderer, options: TemplateCheckOptions): QuotaRow[] {
  return eachResource(cfn, "AWS::StepFunctions::StateMachine").flatMap(({ template, logical, props }) => {
    const machine = String(props.StateMachineName ?? logical);
    const name = options.aslName?.(machine) ?? machine;
    const bounds = options.workflows?.[name] ?? {};
    const def = JSON.parse(cfn.text(props.DefinitionString, template)) as AslStates;
    const maps = mapStates(def).map((m) => {
      const path = m.state.MaxConcurrencyPath;
      // A path no config resolves is unbounded: the check cannot vouch for it.
      const value = path
        ? (bounds.maxConcurrency?.[path] ?? Number.POSITIVE_INFINITY)
        : (m.state.MaxConcurrency ?? 0);
      return m.distributed
        ? quotaRow(
            "Distributed Map MaxConcurrency",
            `${machine}/${m.path}`,
            value,
            DISTRIBUTED_MAP_CONCURRENCY,
            DIST_MAP_DOC,
          )
        : quotaRow(
            "Inline Map MaxConcurrency",
            `${machine}/${m.path}`,
            value,
            INLINE_MAP_CONCURRENCY,
            INLINE_MAP_DOC,
          );
    });
    const history = historyBounds(def, bounds).map((h) =>
      quotaRow(
        "Step Functions history events (worst case)",
        h.execution ? `${machine}/${h.execution} (each child execution)` : machine,
        h.events,
        HISTORY_EVENTS,
        SFN_DOC,
      ),
    );
    return [...maps, ...history];
  });
}
