import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mintRuntimeCredentials } from "./policy-proxy/credentials.ts";
import type { ProxyPrincipal } from "./policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "./policy-proxy/local-tables.ts";

// The local cloud's operator: the platform's own process (its tables, keys and schedules, its runtimes' records) and
// what the person running it runs beside it (scripts in infra/admin, tests, benchmarks: local.json's keys). An
// administrator, as an account's is in AWS, and explicitly so: every action on every resource of the local cloud,
// through the policy proxy like every other caller (its signature checked, its policy evaluated).

export const OPERATOR_ARN = `arn:aws:iam::${LOCAL_ACCOUNT}:user/local-operator`;

/** A platform role's (or state machine role's) assumed-role ARN on the local cloud. */
export const platformRoleArn = (name: string) =>
  `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/agent-platform-${name}/local`;

/**
 * Whether a principal the policy proxy names (its caller header) is the platform's own: one of its roles or the
 * operator, never a deployment's runtime (`agent-rt-*`, created through IAM by the deploy step).
 */
export function isPlatformCallerArn(arn: string): boolean {
  return arn === OPERATOR_ARN || /^arn:aws:sts::\d{12}:assumed-role\/agent-platform-[\w-]+\/local$/.test(arn);
}

/**
 * The operator's key pair, made on the first start and kept in DATA_DIR (0600, beside the KMS master key): local.json's
 * keys stay the same across restarts, for the tools configured with them.
 */
export function operatorCredentials(dataDir: string): { accessKeyId: string; secretAccessKey: string } {
  const file = join(dataDir, "operator-credentials.json");
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as {
      access_key_id: string;
      secret_access_key: string;
    };
    return { accessKeyId: saved.access_key_id, secretAccessKey: saved.secret_access_key };
  }
  const made = mintRuntimeCredentials();
  writeFileSync(
    file,
    JSON.stringify({ access_key_id: made.accessKeyId, secret_access_key: made.secretAccessKey }),
    { mode: 0o600 },
  );
  return made;
}

export function operatorPrincipal(credentials: {
  accessKeyId: string;
  secretAccessKey: string;
}): ProxyPrincipal {
  return {
    ...credentials,
    arn: OPERATOR_ARN,
    policy: {
      Version: "2012-10-17",
      Statement: [{ Sid: "LocalOperator", Effect: "Allow", Action: ["*"], Resource: ["*"] }],
    },
  };
}
