import { createServer, type Server } from "node:http";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll } from "vitest";
import { type EmulatedServices, startAwsEmulator } from "../../infra/local/aws-emulator.ts";
import { newBackendToken, withBackendToken } from "../../infra/local/backend-token.ts";
import { listen } from "../../infra/local/http-util.ts";
import {
  createPolicyProxy,
  type PolicyProxyOptions,
  type ProxyPrincipal,
} from "../../infra/local/policy-proxy/handler.ts";

// The local cloud's AWS emulator serving the services a test builds, behind a policy proxy of its own on loopback:
// the control plane's tests (infra/local/control-plane/*.test.ts) reach it with the real AWS SDK clients, signed as
// a role, and get what the role's policy allows and the service's own refusals for the rest. DynamoDB and S3 lead
// nowhere (port 9): these services need neither.

/** The region the clients sign for and the proxy checks. */
export const REGION = "us-east-1";

export interface SignedEmulator {
  /** An SDK client's settings signed as `credentials`, with no retries (a refusal is the answer under test). */
  client(credentials: ProxyPrincipal): {
    endpoint: string;
    region: string;
    credentials: ProxyPrincipal;
    maxAttempts: number;
  };
}

/** Starts the emulator and its proxy before the file's tests and stops both after them. */
export function signedEmulator(
  services: Partial<EmulatedServices>,
  proxy: Pick<PolicyProxyOptions, "principal" | "iamRole">,
): SignedEmulator {
  const servers: Server[] = [];
  let endpoint: string | undefined;
  beforeAll(async () => {
    const token = newBackendToken();
    const emulator = await startAwsEmulator(services as EmulatedServices, "127.0.0.1", token);
    const front = createServer(
      createPolicyProxy({
        ...proxy,
        upstream: {
          dynamodb: { endpoint: "http://127.0.0.1:9", token },
          s3: { endpoint: "http://127.0.0.1:9", token },
          emulator: { endpoint: emulator.url, token },
        },
        region: REGION,
        kms: { kmsKey: () => undefined, kmsKeyOfCiphertext: () => undefined },
      }),
    );
    servers.push(front, emulator.server);
    endpoint = `http://127.0.0.1:${await listen(front, 0, "127.0.0.1")}`;
  });
  afterAll(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
  return {
    client(credentials) {
      if (!endpoint)
        throw new Error("signedEmulator: a client is made in a test or hook, after the emulator started");
      return { endpoint, region: REGION, credentials, maxAttempts: 1 };
    },
  };
}

/** What a call came to: "allowed", or the error's name, HTTP status and message. */
export function outcome(
  call: Promise<unknown>,
): Promise<"allowed" | { name: string; status: number | undefined; message: string }> {
  return call.then(
    () => "allowed" as const,
    (e: { name: string; message: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: e.name,
      status: e.$metadata?.httpStatusCode,
      message: e.message,
    }),
  );
}

/** The same as one line: "allowed" or "<error name> <status>". */
export async function outcomeLine(call: Promise<unknown>): Promise<string> {
  const o = await outcome(call);
  return o === "allowed" ? o : `${o.name} ${o.status}`;
}

/**
 * The emulator serving `services` to the AWS SDK's own Lambda client, straight (the platform's backend token, no
 * proxy): for tests of the emulator's Lambda wire itself. Started before the file's tests, stopped after them.
 */
export function emulatorLambda(services: Partial<EmulatedServices>): () => LambdaClient {
  let server: Server | undefined;
  let lambda: LambdaClient | undefined;
  beforeAll(async () => {
    const token = newBackendToken();
    const started = await startAwsEmulator(services as EmulatedServices, "127.0.0.1", token);
    server = started.server;
    lambda = withBackendToken(
      new LambdaClient({
        endpoint: started.url,
        region: REGION,
        credentials: { accessKeyId: "x", secretAccessKey: "y" },
        maxAttempts: 1,
      }),
      token,
    );
  });
  afterAll(async () => {
    lambda?.destroy();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });
  return () => {
    if (!lambda) throw new Error("emulatorLambda: the client exists only while the file's tests run");
    return lambda;
  };
}
