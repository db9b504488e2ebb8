import { type App, Duration, Stack } from "aws-cdk-lib";
import {
  AccessLogFormat,
  DomainName,
  EndpointType,
  LambdaIntegration,
  MethodLoggingLevel,
  ResponseTransferMode,
  ResponseType,
  RestApi,
  LogGroupLogDestination as RestLogDestination,
  SecurityPolicy,
} from "aws-cdk-lib/aws-apigateway";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import { Policy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction, Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { ARecord, HostedZone, RecordTarget } from "aws-cdk-lib/aws-route53";
import { ApiGatewayDomain } from "aws-cdk-lib/aws-route53-targets";
import type { Construct, Node } from "constructs";
import { REQUIRED_EXPOSE } from "../../shared/http/cors.ts";
import { acknowledgeRestApi } from "./nag.ts";

// Each deployment's own origin in AWS (issue 25): `<deployment_id>.<domain>`, a wildcard custom domain of API
// Gateway. It is mapped to an API of its own whose only methods are a catch-all (`/` and `/{proxy+}`, ANY) to the
// agent router, so nothing but a deployment's agent server is served there: not the console, not the platform
// API, not another deployment's /agents/{id} paths. The router reads the deployment from Host (Lambda proxy
// events carry it) and the path as the deployment's own. REST, as the agent API: HTTP APIs cannot stream.

/** The agent REST API's stage (part of its URL), which each deployment's own origin maps to as well. */
export const AGENT_STAGE = "live";

/** The operator's settings (cdk context): the domain (AGENT_ORIGIN_DOMAIN), its wildcard certificate, a zone. */
export interface AgentOriginSettings {
  /** e.g. `agents.example.com`: deployment `abc` answers at `https://abc.agents.example.com/`. */
  domain: string;
  /** An ACM certificate in the stack's region covering `*.<domain>`. */
  certificateArn: string;
  /** A Route 53 hosted zone holding `<domain>`: the wildcard alias record is made there. Else: add a CNAME. */
  hostedZoneId?: string;
}

/** The cdk context keys an operator sets (`cdk deploy -c agentOriginDomain=… -c agentOriginCertificateArn=…`). */
export const AGENT_ORIGIN_CONTEXT = {
  domain: "agentOriginDomain",
  certificateArn: "agentOriginCertificateArn",
  hostedZoneId: "agentOriginHostedZoneId",
} as const;

const DOMAIN = /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const ZONE = /^Z[A-Z0-9]{1,32}$/;

/** The settings from the app's context, checked: undefined when no domain is given; a clear error when wrong. */
export function agentOriginSettings(app: App): AgentOriginSettings | undefined {
  const read = (key: string): string | undefined => {
    const v = app.node.tryGetContext(key);
    return v === undefined || v === null || v === "" ? undefined : String(v).trim();
  };
  const domain = read(AGENT_ORIGIN_CONTEXT.domain)
    ?.toLowerCase()
    .replace(/^\.+|\.+$/g, "");
  const certificateArn = read(AGENT_ORIGIN_CONTEXT.certificateArn);
  const hostedZoneId = read(AGENT_ORIGIN_CONTEXT.hostedZoneId);
  if (!domain) {
    if (certificateArn || hostedZoneId)
      throw new Error(
        `${AGENT_ORIGIN_CONTEXT.domain} is not set: a certificate or zone alone serves nothing`,
      );
    return undefined;
  }
  if (!DOMAIN.test(domain))
    throw new Error(
      `${AGENT_ORIGIN_CONTEXT.domain} "${domain}" is not a domain name (e.g. agents.example.com)`,
    );
  if (!certificateArn || !CERTIFICATE.test(certificateArn))
    throw new Error(
      `${AGENT_ORIGIN_CONTEXT.certificateArn} must be the ARN of an ACM certificate for *.${domain} in the stack's region`,
    );
  if (hostedZoneId !== undefined && !ZONE.test(hostedZoneId))
    throw new Error(
      `${AGENT_ORIGIN_CONTEXT.hostedZoneId} "${hostedZoneId}" is not a Route 53 hosted zone id`,
    );
  return { domain, certificateArn, hostedZoneId };
}

/**
 * What the REST APIs pass as bytes: everything. A request body reaches the Lambda base64-encoded (the handlers
 * decode it, shared/http/event.ts), and an answer marked isBase64Encoded (UI fonts and images, protobuf) is
 * decoded to its bytes instead of going out as base64 text.
 */
export const REST_BINARY_MEDIA_TYPES = ["*/*"];

/**
 * The Retry-After of API Gateway's own throttle: the stage's rate and burst (or the account's) are a token bucket
 * refilled every second.
 */
export const GATEWAY_THROTTLE_RETRY_AFTER_SECONDS = 1;

/**
 * The answers a REST API makes itself. Its errors (unknown path, integration timeout…) are readable by browsers;
 * its throttle (gateway response type THROTTLED: the stage's, a method's or the account's request rate, 429) says
 * when to retry. A THROTTLED response of its own no longer falls back to DEFAULT_4XX, so it carries the CORS
 * headers too (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
 *
 * Not covered, and not coverable here: when Lambda throttles the router itself (its reserved concurrency, or the
 * account's, in use), API Gateway answers 500 (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html:
 * "If the Lambda API rejects the invocation request, API Gateway returns a 500"), and AWS documents no gateway
 * response type for it alone; mapping DEFAULT_5XX to 429 would turn every 5xx into one (docs/aws.md).
 */
export function addGatewayAnswers(api: RestApi): void {
  const cors = {
    "Access-Control-Allow-Origin": "'*'",
    "Access-Control-Expose-Headers": `'${REQUIRED_EXPOSE.join(",")}'`,
  };
  for (const type of [ResponseType.DEFAULT_4XX, ResponseType.DEFAULT_5XX])
    api.addGatewayResponse(`Cors${type.responseType}`, { type, responseHeaders: cors });
  api.addGatewayResponse("Throttled", {
    type: ResponseType.THROTTLED,
    statusCode: "429",
    responseHeaders: { ...cors, "Retry-After": `'${GATEWAY_THROTTLE_RETRY_AFTER_SECONDS}'` },
  });
}

/** `-c apiGatewayAccountRole=create`: the app sets the account's API Gateway CloudWatch role (else the operator has). */
export const API_GATEWAY_ACCOUNT_ROLE_CONTEXT = "apiGatewayAccountRole";

export function apiGatewayAccountRole(node: Node): boolean {
  const v = node.tryGetContext(API_GATEWAY_ACCOUNT_ROLE_CONTEXT);
  if (v === undefined || v === null || v === "") return false;
  if (v !== "create")
    throw new Error(
      `${API_GATEWAY_ACCOUNT_ROLE_CONTEXT} must be "create" (the app sets the account's API Gateway CloudWatch role) or unset (the operator has set it), not "${String(v)}"`,
    );
  return true;
}

/**
 * The agent origin's API, its wildcard custom domain and (with a zone) its alias record. `accountLogging`: the
 * construct that sets API Gateway's CloudWatch role for the account, which this stage's execution logs need.
 */
export function addAgentOrigin(
  scope: Construct,
  fns: { router: LambdaFunction; platformServed: Record<string, IFunction> },
  settings: AgentOriginSettings,
  accountLogging: Construct,
): DomainName {
  const { router, platformServed } = fns;
  // The agent routes no runtime serves have functions of their own (the OpenAPI one bundles every handler): the
  // router invokes them by name rather than carrying them. A policy of its own: the role's default policy is
  // one these functions wait for, so naming them there would be a cycle.
  router.addEnvironment(
    "AGENT_ORIGIN_FUNCTIONS",
    Stack.of(scope).toJsonString(
      Object.fromEntries(Object.entries(platformServed).map(([h, fn]) => [h, fn.functionName])),
    ),
  );
  new Policy(scope, "AgentOriginInvoke", {
    roles: [router.role!],
    statements: [
      new PolicyStatement({
        actions: ["lambda:InvokeFunction"],
        resources: Object.values(platformServed).map((fn) => fn.functionArn),
      }),
    ],
  });
  const accessLogs = new LogGroup(scope, "AgentOriginAccessLogs", { retention: RetentionDays.THREE_MONTHS });
  const api = new RestApi(scope, "AgentOriginApi", {
    restApiName: "agent-platform-agent-origins",
    description: `Each deployment's own origin, <deployment_id>.${settings.domain}: every path to the agent router`,
    endpointTypes: [EndpointType.REGIONAL],
    // Reached only through the custom domain, where Host names the deployment.
    disableExecuteApiEndpoint: true,
    cloudWatchRole: false,
    binaryMediaTypes: REST_BINARY_MEDIA_TYPES,
    deployOptions: {
      stageName: AGENT_STAGE,
      accessLogDestination: new RestLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      loggingLevel: MethodLoggingLevel.ERROR,
      throttlingRateLimit: 1000,
      throttlingBurstLimit: 2000,
    },
  });
  api.node.addDependency(accountLogging);
  addGatewayAnswers(api);
  const integration = new LambdaIntegration(router, {
    proxy: true,
    scopePermissionToMethod: false,
    responseTransferMode: ResponseTransferMode.STREAM,
    timeout: Duration.minutes(15),
  });
  // ANY includes OPTIONS: the router answers preflights with the deployment's CORS policy.
  api.root.addMethod("ANY", integration);
  api.root.addResource("{proxy+}").addMethod("ANY", integration);
  acknowledgeRestApi(api, {
    validation:
      "Requests are validated in the router and the runtime with the routes' zod schemas, answering 422 with the API's own error shape.",
    authentication:
      "Authenticated in the router Lambda: the platform API key is checked against SHA-256 key digests in DynamoDB, or the deployment's own custom auth runs in its runtime.",
  });

  const domain = new DomainName(scope, "AgentOriginDomain", {
    domainName: `*.${settings.domain}`,
    certificate: Certificate.fromCertificateArn(scope, "AgentOriginCertificate", settings.certificateArn),
    endpointType: EndpointType.REGIONAL,
    securityPolicy: SecurityPolicy.TLS_1_2,
    mapping: api,
  });
  if (settings.hostedZoneId)
    new ARecord(scope, "AgentOriginRecord", {
      zone: HostedZone.fromHostedZoneId(scope, "AgentOriginZone", settings.hostedZoneId),
      // Fully qualified: the zone may be the domain's parent (example.com for agents.example.com).
      recordName: `*.${settings.domain}.`,
      target: RecordTarget.fromAlias(new ApiGatewayDomain(domain)),
    });
  return domain;
}
