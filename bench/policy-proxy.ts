import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { newBackendToken } from "../infra/local/backend-token.ts";
import { startDynamoDbOnAPort } from "../infra/local/cloud.ts";
import { createTables, dynamoDbLocalClient } from "../infra/local/dynamodb.ts";
import { localRuntimeScope, mintRuntimeCredentials } from "../infra/local/policy-proxy/credentials.ts";
import { type EvaluatorOptions, policyEvaluator } from "../infra/local/policy-proxy/evaluate.ts";
import { createPolicyProxy, type ProxyPrincipal } from "../infra/local/policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "../infra/local/policy-proxy/local-tables.ts";
import { config } from "../shared/config.ts";
import { runtimeKeyPrefixes, runtimePolicy } from "../shared/containment/runtime-policy.ts";
import { tableName } from "../shared/tables.ts";
import { fmt } from "./load.ts";

// npm run bench -- policy-proxy: what a runtime's GetItem and PutItem cost through the policy proxy (SigV4 check,
// IAM evaluation of the generated policy, forwarding) beside the same calls straight to DynamoDB Local (with its
// token, as only the proxy may send them), for each way of evaluating: the simulator or the compiled policy, with
// and without the decision memory. Then the evaluation alone, per decision, for a thread's repeated calls (the
// same LeadingKeys) and for a new thread per call (a new LeadingKeys: a miss of the memory).
const MODES: [string, EvaluatorOptions][] = [
  ["simulator, no memory", { engine: "simulator", cache: false }],
  ["simulator, memory", { engine: "simulator", cache: true }],
  ["compiled, no memory", { engine: "compiled", cache: false }],
  ["compiled, memory (the proxy's)", { engine: "compiled", cache: true }],
];

type Figures = { p50: number; p95: number; cpu: number };

/**
 * Every series in turns of n/10 calls (the machine is shared: a neighbour's burst falls on all of them alike),
 * after a warm-up of each.
 */
async function timeAll(n: number, series: ((i: number) => Promise<unknown>)[]): Promise<Figures[]> {
  for (const f of series) for (let i = 0; i < 50; i++) await f(i);
  const ms = series.map(() => [] as number[]);
  const cpu = series.map(() => 0);
  const block = Math.max(1, Math.floor(n / 10));
  for (let done = 0; done < n; done += block)
    for (const [s, f] of series.entries()) {
      const before = process.cpuUsage();
      for (let i = done; i < Math.min(n, done + block); i++) {
        const t = performance.now();
        await f(i);
        ms[s].push(performance.now() - t);
      }
      const used = process.cpuUsage(before);
      cpu[s] += (used.user + used.system) / 1000;
    }
  return ms.map((m, s) => {
    m.sort((a, b) => a - b);
    return {
      p50: m[Math.floor(m.length / 2)],
      p95: m[Math.floor(m.length * 0.95)],
      cpu: cpu[s] / m.length,
    };
  });
}

/** The evaluation alone, CPU µs per decision: a PutItem's authorization as dynamodb-request.ts reads it. */
function evaluationAlone(
  who: ProxyPrincipal,
  policy: ProxyPrincipal["policy"],
  prefix: string,
  TableName: string,
) {
  const decisions = Number(process.env.BENCH_DECISIONS ?? 50_000);
  // (config.region read once: outside an entry point each read of `config` re-reads the environment.)
  const table = `arn:aws:dynamodb:${config.region}:${LOCAL_ACCOUNT}:table/${TableName}`;
  const auth = (thread: number) => ({
    action: "dynamodb:PutItem",
    resource: table,
    context: { "dynamodb:LeadingKeys": [`${prefix}T${thread}`], "dynamodb:Attributes": ["PK", "SK", "v"] },
  });
  const perDecision = (options: EvaluatorOptions, newThread: boolean) => {
    const evaluator = policyEvaluator(options);
    const run = (count: number, offset: number) => {
      for (let i = 0; i < count; i++)
        if (evaluator.firstDenial(who.arn, LOCAL_ACCOUNT, policy, [auth(newThread ? offset + i : 0)]))
          throw new Error("the bench's own call was denied");
    };
    run(5000, 1_000_000); // warm-up (the JIT)
    // CPU time, not wall time: on a shared machine the wall clock counts the neighbours' work too.
    const before = process.cpuUsage();
    run(decisions, 0);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / decisions;
  };
  console.log(`\npolicy evaluation alone: CPU µs per decision (${decisions} decisions, a runtime's PutItem)`);
  console.log("| evaluation | a thread's repeated call | a new thread each call |");
  console.log("|---|---|---|");
  for (const [name, options] of MODES)
    console.log(
      `| ${name} | ${fmt(perDecision(options, false), 1)} | ${fmt(perDecision(options, true), 1)} |`,
    );
}

export async function policyProxyBench() {
  const token = newBackendToken();
  const dynamo = await startDynamoDbOnAPort(undefined, undefined, token);
  const credentials = mintRuntimeCredentials();
  const policy = runtimePolicy(localRuntimeScope("t", "d"));
  const who: ProxyPrincipal = {
    ...credentials,
    arn: "arn:aws:sts::000000000000:assumed-role/bench/s",
    policy,
  };
  const servers: Server[] = [];
  const proxied = async (evaluation: EvaluatorOptions) => {
    const server = createServer(
      createPolicyProxy({
        principal: (id) => (id === who.accessKeyId ? who : undefined),
        upstream: {
          dynamodb: { endpoint: dynamo.endpoint, token },
          s3: { endpoint: "http://127.0.0.1:9", token },
        },
        region: config.region,
        evaluation,
      }),
    );
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return new DynamoDBClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: config.region,
      credentials,
    });
  };
  const direct = dynamoDbLocalClient({ endpoint: dynamo.endpoint, token });
  const clients = await Promise.all(MODES.map(([, o]) => proxied(o)));
  try {
    await createTables(direct);
    const n = Number(process.env.BENCH_CALLS ?? 500);
    const TableName = tableName("main");
    const prefix = runtimeKeyPrefixes("t", "d").main;
    // A thread's calls: 50 items of one partition, as a run's checkpoint writes and reads.
    const put = (c: DynamoDBClient) => (i: number) =>
      c.send(
        new PutItemCommand({
          TableName,
          Item: { PK: { S: `${prefix}THREAD` }, SK: { S: `k${i % 50}` }, v: { S: "x".repeat(200) } },
        }),
      );
    const get = (c: DynamoDBClient) => (i: number) =>
      c.send(
        new GetItemCommand({ TableName, Key: { PK: { S: `${prefix}THREAD` }, SK: { S: `k${i % 50}` } } }),
      );
    const [directPut, ...puts] = await timeAll(n, [put(direct), ...clients.map(put)]);
    const [directGet, ...gets] = await timeAll(n, [get(direct), ...clients.map(get)]);
    const rows = MODES.map(([name], i) => [name, puts[i], gets[i]] as const);

    // The proxy runs in this process, so the CPU added per call (this process's, client included) is the proxy's.
    console.log(`policy proxy: ${n} sequential calls each, proxy in the benchmark's process`);
    console.log(
      "| evaluation | PutItem p50 ms | added p50 ms | proxy CPU ms/call | GetItem p50 ms | added p50 ms | proxy CPU ms/call |",
    );
    console.log("|---|---|---|---|---|---|---|");
    console.log(
      `| DynamoDB Local direct (reference) | ${fmt(directPut.p50, 2)} | | | ${fmt(directGet.p50, 2)} | | |`,
    );
    for (const [name, p, g] of rows)
      console.log(
        `| ${name} | ${fmt(p.p50, 2)} | ${fmt(p.p50 - directPut.p50, 2)} | ${fmt(p.cpu - directPut.cpu, 3)} | ${fmt(g.p50, 2)} | ${fmt(g.p50 - directGet.p50, 2)} | ${fmt(g.cpu - directGet.cpu, 3)} |`,
      );

    evaluationAlone(who, policy, prefix, TableName);
  } finally {
    for (const c of clients) c.destroy();
    direct.destroy();
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await dynamo.stop();
  }
}
