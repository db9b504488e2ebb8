import { type App, type Environment, Token } from "aws-cdk-lib";
import { config } from "../../shared/config.ts";

// The agent API streams through API Gateway REST response streaming into Lambda response streaming. REST
// response streaming is in every AWS Region ("available in all AWS Regions, including the AWS GovCloud (US)
// Regions": https://aws.amazon.com/about-aws/whats-new/2025/11/api-gateway-response-streaming-rest-apis/); Lambda
// response streaming "is not yet available in all AWS Regions", and AWS's documentation lists no Regions, only
// points to Builder Center's Capabilities by Region (https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html,
// https://builder.aws.com/build/capabilities). So the check is an allow-list the operator extends by context.

/**
 * The Regions of Lambda response streaming's launch announcement
 * (https://aws.amazon.com/about-aws/whats-new/2023/04/aws-lambda-response-payload-streaming/); later ones are
 * added with EXTRA_REGIONS_CONTEXT once Capabilities by Region lists Lambda "response streaming" there. Not
 * re-checked against that page here (no access from the build machine): a Region missing from it is refused with
 * the context flag that accepts it.
 */
export const STREAMING_REGIONS: readonly string[] = [
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
  "ca-central-1",
  "sa-east-1",
  "eu-central-1",
  "eu-west-1",
  "eu-west-2",
  "eu-west-3",
  "eu-south-1",
  "eu-north-1",
  "me-south-1",
  "ap-east-1",
  "ap-south-1",
  "ap-northeast-1",
  "ap-northeast-2",
  "ap-northeast-3",
  "ap-southeast-1",
  "ap-southeast-2",
];

/** cdk context: more Regions to accept (an array, or one string, comma-separated). */
export const EXTRA_REGIONS_CONTEXT = "agent-platform:extra-regions";
/** cdk context: the Region to check an env-agnostic synth against (e.g. a preflight without credentials). */
export const REGION_CONTEXT = "agent-platform:region";

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The Regions this app accepts: the list above and the operator's extra ones. */
export function supportedRegions(app: App): string[] {
  const extra: unknown = app.node.tryGetContext(EXTRA_REGIONS_CONTEXT);
  const list = extra === undefined ? [] : typeof extra === "string" ? extra.split(",") : extra;
  if (!Array.isArray(list) || !list.every((r) => typeof r === "string" && REGION.test(r.trim())))
    throw new Error(
      `${EXTRA_REGIONS_CONTEXT} must be Region names (e.g. "ap-south-2" or ["ap-south-2","il-central-1"]), not ${JSON.stringify(extra)}`,
    );
  return [...STREAMING_REGIONS, ...list.map((r: string) => r.trim())];
}

/**
 * The Region the app deploys to when known: the stacks' env, else the context setting, else the CDK CLI's
 * CDK_DEFAULT_REGION (what `cdk deploy` resolved from the credentials); undefined for an env-agnostic synth.
 */
export function appRegion(app: App, env?: Environment): string | undefined {
  if (env?.region && !Token.isUnresolved(env.region)) return env.region;
  return app.node.tryGetContext(REGION_CONTEXT) ?? config.cdkDefaultRegion ?? undefined;
}

/** Fails synthesis, saying why and what to do, when the app's Region is known and not one of the supported. */
export function checkRegion(app: App, env?: Environment): void {
  const region = appRegion(app, env);
  if (region === undefined) return;
  const supported = supportedRegions(app);
  if (supported.includes(region)) return;
  throw new Error(
    `Region ${region} is not one where the platform is known to run: the agent API streams (SSE, waits) through ` +
      `Lambda response streaming, which AWS has not brought to every Region, and has no buffered fallback. ` +
      `Deploy to one of ${supported.join(", ")}; or, if AWS's Capabilities by Region ` +
      `(https://builder.aws.com/build/capabilities) lists Lambda "response streaming" in ${region}, ` +
      `add it: -c ${EXTRA_REGIONS_CONTEXT}=${region} (or in cdk.json's context).`,
  );
}
