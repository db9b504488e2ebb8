import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { newBackendToken } from "../infra/local/backend-token.ts";
import { startDynamoDbOnAPort } from "../infra/local/cloud.ts";
import { createTables, dynamoDbLocalClient } from "../infra/local/dynamodb.ts";
import { localRuntimeScope, mintRuntimeCredentials } from "../infra/local/policy-proxy/credentials.ts";
import { createPolicyProxy, type ProxyPrincipal } from "../infra/local/policy-proxy/handler.ts";
import { config } from "../shared/config.ts";
import { runtimeKeyPrefixes, runtimePolicy } from "../shared/containment/runtime-policy.ts";
import { tableName } from "../shared/tables.ts";
import { fmt } from "./load.ts";

// npm run bench -- policy-proxy: p50/p95 of a runtime's GetItem and PutItem through the policy proxy (SigV4
// check, IAM evaluation of the generated policy, forwarding) beside the same calls straight to DynamoDB Local (with
// its token, as only the proxy may send them).
export async function policyProxyBench() {
  const token = newBackendToken();
  const dynamo = await startDynamoDbOnAPort(undefined, undefined, token);
  const credentials = mintRuntimeCredentials();
  const who: ProxyPrincipal = {
    ...credentials,
    arn: "arn:aws:sts::000000000000:assumed-role/bench/s",
    policy: runtimePolicy(localRuntimeScope("t", "d")),
  };
  const server = createServer(
    createPolicyProxy({
      principal: (id) => (id === who.accessKeyId ? who : undefined),
      upstream: {
        dynamodb: { endpoint: dynamo.endpoint, token },
        s3: { endpoint: "http://127.0.0.1:9", token },
      },
      region: config.region,
    }),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const proxied = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: config.region,
    credentials,
  });
  const direct = dynamoDbLocalClient({ endpoint: dynamo.endpoint, token });
  try {
    await createTables(direct);
    const n = Number(process.env.BENCH_CALLS ?? 500);
    const TableName = tableName("main");
    const pk = `${runtimeKeyPrefixes("t", "d").main}THREAD`;
    const time = async (f: (i: number) => Promise<unknown>) => {
      for (let i = 0; i < 50; i++) await f(i); // warm-up
      const ms: number[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await f(i);
        ms.push(performance.now() - t);
      }
      const used = process.cpuUsage(cpu);
      ms.sort((a, b) => a - b);
      return {
        p50: ms[Math.floor(n / 2)],
        p95: ms[Math.floor(n * 0.95)],
        cpu: (used.user + used.system) / 1000 / n,
      };
    };
    const put = (c: DynamoDBClient) => (i: number) =>
      c.send(
        new PutItemCommand({
          TableName,
          Item: { PK: { S: pk }, SK: { S: `k${i % 50}` }, v: { S: "x".repeat(200) } },
        }),
      );
    const get = (c: DynamoDBClient) => (i: number) =>
      c.send(new GetItemCommand({ TableName, Key: { PK: { S: pk }, SK: { S: `k${i % 50}` } } }));
    const rows = [
      ["PutItem", await time(put(direct)), await time(put(proxied))],
      ["GetItem", await time(get(direct)), await time(get(proxied))],
    ] as const;
    // The proxy runs in this process, so the CPU added per call (this process's, client included) is the proxy's.
    console.log(`policy proxy: ${n} sequential calls each, proxy in the benchmark's process`);
    console.log(
      "| call | direct p50 ms | proxy p50 ms | added p50 ms | direct p95 ms | proxy p95 ms | proxy CPU ms/call |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const [name, d, p] of rows)
      console.log(
        `| ${name} | ${fmt(d.p50, 2)} | ${fmt(p.p50, 2)} | ${fmt(p.p50 - d.p50, 2)} | ${fmt(d.p95, 2)} | ${fmt(p.p95, 2)} | ${fmt(p.cpu - d.cpu, 2)} |`,
      );
  } finally {
    proxied.destroy();
    direct.destroy();
    server.closeAllConnections();
    server.close();
    await dynamo.stop();
  }
}
