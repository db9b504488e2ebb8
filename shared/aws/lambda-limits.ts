// Lambda's limits on code size, shared by the synth-time checks (infra/quotas/bundle-quotas.ts), the build
// exchange (what a revision's artifact may hold) and the deploy step (lambda-host.ts, before CreateFunction).

/**
 * A function's code and layers unzipped: 250 MB (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html),
 * 262,144,000 bytes as GetAccountSettings' CodeSizeUnzipped reports it.
 */
export const LAMBDA_UNZIPPED_CODE_BYTES = 262_144_000;

/**
 * An invocation's request payload, synchronous or streamed: 6 MB (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html,
 * "Invocation payload (request and response)"), 6,291,456 bytes.
 */
export const LAMBDA_REQUEST_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** What the platform keeps for its runtime layer under each deployment's function (the layer is ~6 MB today). */
export const RUNTIME_LAYER_BUDGET_BYTES = 20 * 1024 * 1024;

/** The largest revision the platform accepts: what Lambda's limit leaves beside the runtime layer's budget. */
export const MAX_REVISION_BYTES = LAMBDA_UNZIPPED_CODE_BYTES - RUNTIME_LAYER_BUDGET_BYTES;

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Why a revision of `revisionBytes` unzipped cannot run beside a layer of `layerBytes` (undefined if it can):
 * checked before CreateFunction, whose own refusal comes only after the upload, in Lambda's words.
 */
export function revisionTooLarge(revisionBytes: number, layerBytes: number): string | undefined {
  const room = Math.min(LAMBDA_UNZIPPED_CODE_BYTES - layerBytes, MAX_REVISION_BYTES);
  if (revisionBytes <= room) return undefined;
  return `the revision's code is ${mb(revisionBytes)} unzipped; beside the platform's runtime layer (${mb(layerBytes)}) a Lambda function holds ${mb(room)} (250 MB in all, layers included)`;
}
