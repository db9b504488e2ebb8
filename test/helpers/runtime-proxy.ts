import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import { localRuntimeScope, mintRuntimeCredentials } from "../../infra/local/policy-proxy/credentials.ts";
import {
  createPolicyProxy,
  type PolicyProxyOptions,
  type ProxyPrincipal,
} from "../../infra/local/policy-proxy/handler.ts";
import { config } from "../../shared/config.ts";
import { type PolicyDocument, runtimePolicy } from "../../shared/containment/runtime-policy.ts";

// A deployment's runtime as the policy proxy sees it (fresh keys, its role's ARN and policy), and a proxy of its
// own in front of the test cloud's backends: for tests that sign as a runtime, as a graph's code can.

/** A runtime's principal, under its role's generated policy unless another is given. */
export function runtimePrincipal(
  tenant: string,
  deployment: string,
  policy?: PolicyDocument,
): ProxyPrincipal {
  return {
    ...mintRuntimeCredentials(),
    arn: `arn:aws:sts::000000000000:assumed-role/agent-rt-${deployment}/local`,
    policy: policy ?? runtimePolicy(localRuntimeScope(tenant, deployment)),
    deployment: { tenant_id: tenant, deployment_id: deployment },
  };
}

/**
 * A policy proxy on a free loopback port serving `runtime` alone (its writes charged to `more.storage` when given, as
 * the local Lambda service's proxies charge theirs); `close` ends its connections too.
 */
export async function startRuntimeProxy(
  runtime: ProxyPrincipal,
  more: Pick<PolicyProxyOptions, "kms" | "storage"> = {},
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = createServer(
    createPolicyProxy({
      principal: (id) => (id === runtime.accessKeyId ? runtime : undefined),
      upstream: inject("backends"),
      region: config.region,
      ...more,
    }),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
