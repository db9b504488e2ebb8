import { Stack, Validations } from "aws-cdk-lib";
import { flattenCfnReference } from "cdk-nag/lib/utils/flatten-cfn-reference.js";
import type { IConstruct } from "constructs";

// cdk-nag 3 reports each wildcard as its own finding ("AwsSolutions-IAM5[Resource::…]") and only accepts exact
// acknowledgments, so these helpers name findings the way cdk-nag prints them instead of hand-copying ids.

/** Acknowledge one AwsSolutions finding (e.g. "S1" or "IAM5[Action::s3:List*]") on a construct and its children. */
export function acknowledge(scope: IConstruct, finding: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions-${finding}`, reason });
}

/**
 * The findings every REST API of the platform answers the same way: requests validated and authenticated by its
 * Lambdas (where: the API's own words), no WAF by default, no Cognito.
 */
export function acknowledgeRestApi(
  api: IConstruct,
  how: { validation: string; authentication: string },
): void {
  acknowledge(api, "APIG2", how.validation);
  acknowledge(
    api,
    "APIG3",
    "No WAF web ACL by default: the API key check and stage throttling guard it; attach a web ACL per account.",
  );
  acknowledge(api, "APIG4", how.authentication);
  acknowledge(api, "COG4", "Clients authenticate with the platform's API keys, not Cognito user pools.");
}

/** Acknowledge IAM5 wildcard actions. */
export function acknowledgeActions(scope: IConstruct, actions: string[], reason: string): void {
  for (const action of actions) acknowledge(scope, `IAM5[Action::${action}]`, reason);
}

/**
 * Acknowledge an IAM5 wildcard resource given as the ARN (token) used in the policy. The token must be local to
 * the scope's stack (a GetAtt, pseudo parameters or an explicit Fn::ImportValue) so it resolves the same way now
 * as when cdk-nag reads the synthesized policy.
 */
export function acknowledgeResource(scope: IConstruct, arn: string, reason: string): void {
  const flat = flattenCfnReference(Stack.of(scope).resolve(arn));
  acknowledge(scope, `IAM5[Resource::${flat}]`, reason);
}
