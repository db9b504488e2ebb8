import { CfnOutput, Duration, NestedStack, Stack, type StackProps } from "aws-cdk-lib";
import {
  AccessLogFormat,
  type DomainName,
  EndpointType,
  type IResource,
  LambdaIntegration,
  MethodLoggingLevel,
  ResponseTransferMode,
  RestApi,
  LogGroupLogDestination as RestLogDestination,
} from "aws-cdk-lib/aws-apigateway";
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  type IHttpApi,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import {
  AGENT_ENTRY_POINTS,
  type Group,
  mountedRoutes,
  type Route,
  routeId,
  servedByRuntime,
} from "../../functions/routes.ts";
import { SELF_HOSTED_PREFIX } from "../../shared/config.ts";
import { DEFAULT_METHODS, REQUIRED_EXPOSE } from "../../shared/http/cors.ts";
import { routeEnvironment } from "../build/function-bundles.ts";
import {
  AGENT_STAGE,
  type AgentOriginSettings,
  addAgentOrigin,
  addGatewayAnswers,
  apiGatewayAccountRole,
  REST_BINARY_MEDIA_TYPES,
} from "./agent-origin.ts";
import { runtimeEnvironment } from "./agent-runtimes.ts";
import type { ReservedConcurrency } from "./concurrency.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledge, acknowledgeRestApi } from "./nag.ts";
import { handlerFunction } from "./node-function.ts";
import { publishParameter, readParameter } from "./stack-parameters.ts";
import type { WorkflowsStack } from "./workflows-stack.ts";

/** API Gateway's hard limit on routes per HTTP API. */
const MAX_HTTP_API_ROUTES = 300;
/**
 * Groups served by their own REST API instead of the HTTP API: HTTP APIs cannot stream a Lambda response,
 * REST APIs can (responseTransferMode STREAM), and the agent server streams runs as SSE. The SDK is pointed
 * at `<AgentApiUrl>agents/<deployment_id>`.
 */
export const REST_GROUPS: ReadonlySet<Group> = new Set(["agent"]);
/** Groups whose handlers reach deployments' runtimes (route to them, remove them). */
const RUNTIME_GROUPS: ReadonlySet<Group> = new Set(["agent", "control"]);
export interface ApiStackProps extends StackProps {
  data: DataStack;
  workflows: WorkflowsStack;
  routes: Route[];
  /** Each deployment's own origin, `<deployment_id>.<domain>` (agent-origin.ts); none when unset. */
  agentOrigin?: AgentOriginSettings;
  /** The router's reserved concurrency (concurrency.ts). */
  concurrency: ReservedConcurrency;
}

/** The HTTP API; each route group lives in its own nested stack to stay under 500 resources per stack. */
const HTTP_API_PARAMETER = "HttpApiId";
const AGENT_API_PARAMETER = "AgentRestApiId";

export class ApiStack extends Stack {
  readonly api: HttpApi;
  readonly groups = new Map<Group, ApiGroupStack>();

  /** The HTTP API's id in `scope`'s stack, read from its SSM parameter when that stack deploys. */
  httpApiIdIn(scope: Construct): string {
    return readParameter(scope, this, HTTP_API_PARAMETER);
  }

  /** The agent REST API's id in `scope`'s stack, when the routes have an agent group. */
  agentApiIdIn(scope: Construct): string | undefined {
    return this.groups.get("agent")?.restApi ? readParameter(scope, this, AGENT_API_PARAMETER) : undefined;
  }

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const mounted = mountedRoutes(props.routes.filter((r) => !REST_GROUPS.has(r.group))).length;
    if (mounted > MAX_HTTP_API_ROUTES)
      throw new Error(`${mounted} mounted routes exceed the ${MAX_HTTP_API_ROUTES} routes an HTTP API holds`);

    this.api = new HttpApi(this, "Api", {
      apiName: "agent-platform",
      description: "Agent platform API (one Lambda per route)",
      createDefaultStage: false,
      // Browser clients: API Gateway answers preflights (no API key needed) and adds the headers to every answer,
      // with the reference server's defaults (shared/http/cors.ts). Authorization is named because a browser
      // does not count it under "*".
      corsPreflight: {
        allowOrigins: ["*"],
        allowMethods: DEFAULT_METHODS.map((m) => CorsHttpMethod[m as keyof typeof CorsHttpMethod]),
        allowHeaders: ["*", "authorization"],
        exposeHeaders: REQUIRED_EXPOSE,
      },
    });
    const accessLogs = new LogGroup(this, "AccessLogs", { retention: RetentionDays.THREE_MONTHS });
    const stage = new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // Only $context variables HTTP APIs support; one JSON object per request.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: "$context.requestId",
            ip: "$context.identity.sourceIp",
            time: "$context.requestTime",
            routeKey: "$context.routeKey",
            status: "$context.status",
            protocol: "$context.protocol",
            responseLength: "$context.responseLength",
            latencyMs: "$context.responseLatency",
            integrationError: "$context.integrationErrorMessage",
          }),
        ),
      },
    });

    const byGroup = new Map<Group, Route[]>();
    for (const r of props.routes) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
    for (const [group, routes] of byGroup) {
      this.groups.set(
        group,
        new ApiGroupStack(this, `Group-${group}`, {
          data: props.data,
          workflows: props.workflows,
          group,
          routes,
          api: this.api,
          agentOrigin: props.agentOrigin,
          concurrency: props.concurrency,
        }),
      );
    }
    // For the console's origins: parameters, not exports, so a replaced API (a new group layout) does not block.
    publishParameter(this, HTTP_API_PARAMETER, this.api.apiId);
    const agent = this.groups.get("agent")?.restApi;
    if (agent) publishParameter(this, AGENT_API_PARAMETER, agent.restApiId);
    if (agent)
      new CfnOutput(this, "AgentApiUrl", {
        value: agent.url,
        description:
          "Base URL of the agent servers: point the LangGraph SDK at <AgentApiUrl>agents/<deployment_id>",
      });

    const origin = this.groups.get("agent")?.originDomain;
    if (origin && props.agentOrigin) {
      new CfnOutput(this, "AgentOriginUrl", {
        value: `https://<deployment_id>.${props.agentOrigin.domain}/`,
        description: "Each deployment's own origin: its agent server at the root (point the SDK there)",
      });
      new CfnOutput(this, "AgentOriginDnsTarget", {
        value: origin.domainNameAliasDomainName,
        description: `Where *.${props.agentOrigin.domain} must point (CNAME) when no hosted zone was given`,
      });
    }

    new CfnOutput(this, "ApiUrl", { value: stage.url, description: "Base URL of the agent platform API" });
  }
}

interface ApiGroupStackProps {
  group: Group;
  routes: Route[];
  api: IHttpApi;
  data: DataStack;
  workflows: WorkflowsStack;
  agentOrigin?: AgentOriginSettings;
  concurrency: ReservedConcurrency;
}

/**
 * One API group: a shared least-privilege role, one function per route, one HttpRoute per mounted path — or,
 * for a REST group, its own REST API with one method per route, streaming routes streamed.
 */
class ApiGroupStack extends NestedStack {
  readonly restApi?: RestApi;
  /** The agent group's wildcard custom domain, when the agent origin is configured. */
  readonly originDomain?: DomainName;

  constructor(scope: Construct, id: string, props: ApiGroupStackProps) {
    super(scope, id, { description: `Agent platform API group "${props.group}"` });
    const role = props.workflows.platformRole(this, "Role", `api-${props.group}`);
    const environment = {
      ...props.data.functionEnvironment(this),
      ...props.workflows.functionEnvironment(this),
      ...(RUNTIME_GROUPS.has(props.group) ? runtimeEnvironment(this, props.data) : {}),
    };

    if (REST_GROUPS.has(props.group)) this.restApi = this.agentRestApi();
    // Routes a deployment's runtime serves all go to one router (platform code: the API key is checked there),
    // which streams each request through the runtime function of the deployment's active revision.
    const origin = props.group === "agent" ? props.agentOrigin : undefined;
    const router = props.routes.some(servedByRuntime)
      ? handlerFunction(this, "AgentRouter", {
          handler: AGENT_ENTRY_POINTS.router,
          role,
          // The router reads a deployment's own origin from Host under this domain (shared/agent/edge/origin.ts).
          environment: origin ? { ...environment, AGENT_ORIGIN_DOMAIN: origin.domain } : environment,
          timeout: Duration.minutes(15),
          description: "Routes agent-server requests to each deployment's runtime function",
          reservedConcurrency: props.concurrency.router,
        })
      : undefined;
    // CORS preflights of the agent servers: an OPTIONS method on every agent-server path, answered by the router
    // without authentication with the deployment's own policy (its langgraph.json http.cors). One permission for
    // the whole API rather than one per method (a function's resource policy holds 20 KB).
    if (router && this.restApi) {
      const preflight = new LambdaIntegration(router, {
        proxy: true,
        scopePermissionToMethod: false,
        responseTransferMode: ResponseTransferMode.STREAM,
        timeout: Duration.seconds(29),
      });
      const resources = new Map<string, IResource>();
      for (const route of props.routes)
        resources.set(route.path, this.restApi.root.resourceForPath(route.path));
      for (const resource of resources.values()) resource.addMethod("OPTIONS", preflight);
    }
    // Every runtime-served method goes to the router through one integration whose permission covers the API
    // once: one statement per method (63 of them) made the router's resource policy larger than the 20,480 bytes
    // Lambda allows a function's policy (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html),
    // and the first deploy would fail.
    const routed = router
      ? new LambdaIntegration(router, {
          proxy: true,
          // (No allowTestInvoke: with the permission scoped to the API it has nothing to leave out, and CDK warns.)
          scopePermissionToMethod: false,
          responseTransferMode: ResponseTransferMode.STREAM,
          timeout: Duration.minutes(15),
        })
      : undefined;
    // The agent routes no runtime serves (health, docs, UI files…): at a deployment's own origin the router
    // invokes their functions.
    const platformServed: Record<string, LambdaFunction> = {};
    const seen = new Map<string, Route>();
    for (const route of props.routes) {
      const id = routeId(route);
      const clash = seen.get(id);
      if (clash)
        throw new Error(
          `Routes ${clash.method} ${clash.path} and ${route.method} ${route.path} share handler ${route.handler}`,
        );
      seen.set(id, route);

      if (router && servedByRuntime(route)) {
        this.restApi!.root.resourceForPath(route.path).addMethod(route.method, routed!);
        continue;
      }
      const fn = handlerFunction(this, id, {
        handler: route.handler,
        role,
        environment: { ...environment, ...routeEnvironment(route) },
        // A stream lasts as long as its run: up to the 15 minutes a streamed REST integration allows.
        timeout: route.stream ? Duration.minutes(15) : undefined,
        description: `${route.method} ${route.path}: ${route.summary}`.slice(0, 256),
      });
      if (origin) platformServed[route.handler] = fn;
      if (this.restApi) {
        this.restApi.root.resourceForPath(route.path).addMethod(
          route.method,
          new LambdaIntegration(fn, {
            proxy: true,
            allowTestInvoke: false,
            ...(route.stream
              ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: Duration.minutes(15) }
              : {}),
          }),
        );
        continue;
      }
      const integration = new HttpLambdaIntegration(`${id}Integration`, fn);
      for (const mount of mountedRoutes([route])) {
        const suffix =
          mount.mountPath.startsWith(SELF_HOSTED_PREFIX) && mount.mountPath !== route.path ? "Host" : "";
        const httpRoute = new HttpRoute(this, `${id}Route${suffix}`, {
          httpApi: props.api,
          routeKey: HttpRouteKey.with(mount.mountPath, HttpMethod[route.method]),
          integration,
        });
        acknowledge(
          httpRoute,
          "APIG4",
          route.auth
            ? "Authenticated in the Lambda: the API key (X-API-Key or Authorization header) is checked against SHA-256 key digests stored in DynamoDB, and the tenant is resolved there too."
            : "Deliberately without an API key: health, OpenAPI document or server info (no tenant data), or a caller that proves itself in the Lambda instead (an OAuth flow's single-use state; a GitHub webhook delivery's HMAC-SHA256 signature made with its integration's KMS-sealed secret).",
        );
      }
    }
    if (router && this.restApi && origin)
      this.originDomain = addAgentOrigin(this, { router, platformServed }, origin, this.restApi);
  }

  /** The REST API of a streaming group: regional, access-logged, errors logged, throttled per stage. */
  private agentRestApi(): RestApi {
    const accessLogs = new LogGroup(this, "AccessLogs", { retention: RetentionDays.THREE_MONTHS });
    const api = new RestApi(this, "AgentApi", {
      restApiName: "agent-platform-agents",
      description: "Agent servers (LangGraph API): one Lambda per route, run streams streamed as SSE",
      endpointTypes: [EndpointType.REGIONAL],
      // The account's API Gateway CloudWatch role is one per Region, shared by every REST API of the account: the
      // operator's (docs/aws.md), set only when told to (-c apiGatewayAccountRole=create), never overwritten.
      cloudWatchRole: apiGatewayAccountRole(this.node),
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
    // Answers API Gateway makes itself are readable by browsers; its throttle is a 429 with Retry-After.
    addGatewayAnswers(api);
    acknowledgeRestApi(api, {
      validation:
        "Requests are validated in each Lambda with the route's zod schemas, answering 422 with the API's own error shape.",
      authentication:
        "Authenticated in the Lambda: the API key (X-API-Key or Authorization header) is checked against SHA-256 key digests stored in DynamoDB, and the tenant is resolved there too.",
    });
    if (apiGatewayAccountRole(this.node))
      acknowledge(
        api,
        "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
        "API Gateway's account-level role for execution logs only writes CloudWatch Logs.",
      );
    return api;
  }
}
