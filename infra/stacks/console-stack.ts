import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  Aws,
  CfnOutput,
  DefaultStackSynthesizer,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
} from "aws-cdk-lib";
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  type IOrigin,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { HttpOrigin, S3BucketOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { BucketDeployment, CacheControl, Source } from "aws-cdk-lib/aws-s3-deployment";
import type { Construct } from "constructs";
import { mountedRoutes, type Route } from "../../functions/routes.ts";
import { consoleCsp } from "../local/console-files.ts";
import { AGENT_STAGE } from "./agent-origin.ts";
import { REST_GROUPS } from "./api-stack.ts";
import { ABORT_UPLOADS_DAYS } from "./data-stack.ts";
import { acknowledge, acknowledgeActions, acknowledgeResource } from "./nag.ts";

/** The files console/dist (infra/console/build.mjs) must hold; the distribution serves all it has. */
export const CONSOLE_FILES = ["index.html", "app.js", "app.css"];
/**
 * CloudFront's origin response timeout: how long it waits for the first byte and then between packets. 60 s is
 * the most every account may set without a quota increase; SSE streams stay open past it when they send an
 * event or a heartbeat within it.
 */
export const API_READ_TIMEOUT = Duration.seconds(60);
/** CloudFront allows 25 cache behaviors per distribution by default; one is the default behavior. */
const MAX_BEHAVIORS = 24;
/** Security headers of every answer: HSTS, nosniff, no framing, no referrer (as the local gateway sends). */
const commonSecurityHeaders = {
  strictTransportSecurity: {
    accessControlMaxAge: Duration.days(730),
    includeSubdomains: true,
    override: true,
  },
  contentTypeOptions: { override: true },
  frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
  referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
};

export interface ConsoleStackProps extends StackProps {
  /**
   * The APIs' ids in this stack: the HTTP API (every group but the REST ones, at its $default stage) and the
   * agent servers' REST API when the routes have an agent group (ApiStack: read by SSM parameter, not export).
   */
  apis: { httpApiIdIn(scope: Construct): string; agentApiIdIn(scope: Construct): string | undefined };
  routes: Route[];
  /** console/dist, built by infra/console/build.mjs. */
  consoleDir: string;
  /** The platform bucket's name in `scope` (a run's attachments are presigned there): the console loads them. */
  attachmentsBucketIn?(scope: Construct): string;
}

/**
 * CloudFront path patterns of the routes, by API: a first path segment with deeper routes is `/<segment>/*`, a
 * one-segment route is itself (`/ok`). Derived from the manifest so a new prefix is routed without a change here.
 */
export function apiPathPatterns(routes: Route[]): { http: string[]; rest: string[] } {
  const patterns = { http: new Set<string>(), rest: new Set<string>() };
  for (const r of mountedRoutes(routes)) {
    const [, first, ...rest] = r.mountPath.split("/");
    if (!first || first.startsWith("{"))
      throw new Error(`Route ${r.routeKey} has no fixed first path segment to route it by in CloudFront`);
    if (CONSOLE_FILES.includes(first))
      throw new Error(`Route ${r.routeKey} shadows the console file ${first}`);
    const api = REST_GROUPS.has(r.group) ? patterns.rest : patterns.http;
    api.add(rest.length > 0 ? `/${first}/*` : `/${first}`);
  }
  const http = [...patterns.http].sort();
  const rest = [...patterns.rest].sort();
  const both = http.filter((p) => rest.includes(p));
  if (both.length)
    throw new Error(`Path patterns ${both.join(", ")} are served by both the HTTP and REST APIs`);
  return { http, rest };
}

/** An API Gateway API (HTTP or REST, regional) of this region as a CloudFront origin. */
function apiOrigin(apiId: string, originPath?: string): IOrigin {
  return new HttpOrigin(`${apiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`, {
    originPath,
    protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    readTimeout: API_READ_TIMEOUT,
  });
}

/**
 * The web console: console/dist in a private bucket read by CloudFront through Origin Access Control, and the
 * platform's APIs behind the same distribution (one origin for the browser: no CORS, relative API paths).
 */
export class ConsoleStack extends Stack {
  readonly bucket: Bucket;
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: ConsoleStackProps) {
    super(scope, id, props);
    const missing = CONSOLE_FILES.filter((f) => !existsSync(join(props.consoleDir, f)));
    if (missing.length)
      throw new Error(
        `${props.consoleDir} lacks ${missing.join(", ")}: build the console first (node infra/console/build.mjs)`,
      );

    // S3 server access logs and CloudFront standard logs. CloudFront writes its logs with ACLs, so object
    // writers keep ownership here (ACLs are never public: all public access blocked).
    const logs = new Bucket(this, "AccessLogs", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [
        {
          expiration: Duration.days(365),
          abortIncompleteMultipartUploadAfter: Duration.days(ABORT_UPLOADS_DAYS),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // The files are public by nature (the console's code), so SSE-S3; what is private is the bucket itself.
    this.bucket = new Bucket(this, "Files", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: "console/",
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(ABORT_UPLOADS_DAYS) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // S3 presigns virtual-hosted URLs on the bucket's regional endpoint.
    const bucketName = props.attachmentsBucketIn?.(this);
    const attachments = bucketName && `https://${bucketName}.s3.${Aws.REGION}.${Aws.URL_SUFFIX}`;
    const consoleHeaders = new ResponseHeadersPolicy(this, "ConsoleHeaders", {
      comment: "Agent platform console: CSP (as the local gateway sends it), HSTS, nosniff, no framing",
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: consoleCsp(attachments), override: true },
        ...commonSecurityHeaders,
      },
    });
    const apiHeaders = new ResponseHeadersPolicy(this, "ApiHeaders", {
      comment: "Agent platform APIs behind the console's origin: HSTS, nosniff, no framing",
      securityHeadersBehavior: commonSecurityHeaders,
    });

    const { http, rest } = apiPathPatterns(props.routes);
    const apiBehavior = (origin: IOrigin): BehaviorOptions => ({
      origin,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      // Every header (X-Api-Key, X-Tenant-Id, Last-Event-ID, …), cookie and query string; Host is the API's own.
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: apiHeaders,
      // Bodies pass through as the API sends them: SSE is never held back to be compressed.
      compress: false,
    });
    const additionalBehaviors: Record<string, BehaviorOptions> = {};
    // The HTTP API's $default stage is its root: no origin path.
    const httpOrigin = apiOrigin(props.apis.httpApiIdIn(this));
    for (const p of http) additionalBehaviors[p] = apiBehavior(httpOrigin);
    if (rest.length) {
      const agentApiId = props.apis.agentApiIdIn(this);
      if (!agentApiId) throw new Error(`Routes under ${rest.join(", ")} need the agent REST API`);
      // Origin path = the stage, so /agents/… reaches <stage>/agents/….
      const agentOrigin = apiOrigin(agentApiId, `/${AGENT_STAGE}`);
      for (const p of rest) additionalBehaviors[p] = apiBehavior(agentOrigin);
    }
    if (Object.keys(additionalBehaviors).length > MAX_BEHAVIORS)
      throw new Error(
        `${Object.keys(additionalBehaviors).length} API path patterns exceed CloudFront's behaviors`,
      );

    this.distribution = new Distribution(this, "Distribution", {
      comment: "Agent platform: web console and its APIs on one origin",
      defaultRootObject: "index.html",
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: consoleHeaders,
        compress: true,
      },
      additionalBehaviors,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: "cloudfront/",
    });

    // File names are stable (app.js, not app.<hash>.js): browsers revalidate every load, the edge keeps a copy
    // for a day and each deploy invalidates it.
    new BucketDeployment(this, "Deploy", {
      // Every built file but the build's own stamp (.digest).
      sources: [Source.asset(props.consoleDir, { exclude: [".*"] })],
      destinationBucket: this.bucket,
      cacheControl: [CacheControl.fromString("public, max-age=0, s-maxage=86400, must-revalidate")],
      distribution: this.distribution,
      distributionPaths: ["/*"],
    });

    this.acknowledgeFindings();

    new CfnOutput(this, "ConsoleUrl", {
      value: `https://${this.distribution.distributionDomainName}/`,
      description:
        "The web console, and every platform API under the same origin (e.g. <ConsoleUrl>api/v1/…)",
    });
  }

  private acknowledgeFindings(): void {
    acknowledge(
      this.distribution,
      "CFR1",
      "No geo restriction by default: the console and APIs serve wherever their users are; add one per account.",
    );
    acknowledge(
      this.distribution,
      "CFR2",
      "No WAF web ACL by default (as for the APIs behind it): the API key check and API Gateway throttling guard them; attach a web ACL per account.",
    );
    acknowledge(
      this.distribution,
      "CFR4",
      "No custom domain by default: the *.cloudfront.net default certificate's TLS policy is CloudFront's own; give the distribution a domain and certificate to pin TLSv1.2_2021.",
    );
    // CDK's BucketDeployment: one singleton handler per stack (the AWS CLI's s3 sync in a Lambda), not ours to shape.
    const handlers = this.node.children.filter((c) => c.node.id.startsWith("Custom::CDKBucketDeployment"));
    if (handlers.length !== 1)
      throw new Error("BucketDeployment's handler not found to acknowledge its findings");
    const handler = handlers[0];
    acknowledge(
      handler,
      "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
      "CDK's BucketDeployment handler only writes its own CloudWatch Logs with this policy.",
    );
    acknowledgeActions(
      handler,
      ["s3:GetBucket*", "s3:GetObject*", "s3:List*", "s3:Abort*", "s3:DeleteObject*"],
      "CDK's BucketDeployment syncs the console's asset into its bucket (aws s3 sync --delete): read the CDK asset, replace and prune the console files; its grants reach only those two buckets.",
    );
    // The CDK bootstrap asset bucket's objects, as cdk-nag prints them.
    const qualifier =
      this.node.tryGetContext("@aws-cdk/core:bootstrapQualifier") ??
      DefaultStackSynthesizer.DEFAULT_QUALIFIER;
    acknowledge(
      handler,
      `IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>/*]`,
      "The CDK bootstrap asset bucket, read for the console's asset zip (CDK names the object at deploy).",
    );
    acknowledgeResource(
      handler,
      this.bucket.arnForObjects("*"),
      "The console bucket's files: the deployment replaces and prunes them all.",
    );
    acknowledge(
      handler,
      "IAM5[Resource::*]",
      "cloudfront:CreateInvalidation/GetInvalidation after each deploy; CDK's BucketDeployment grants them on every distribution.",
    );
    acknowledge(
      handler,
      "L1",
      "CDK's BucketDeployment picks its handler's runtime (Python, with the AWS CLI layer); it is updated with aws-cdk-lib.",
    );
  }
}
