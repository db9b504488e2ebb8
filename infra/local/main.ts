import { ConfigError, loadConfig, setEnvironment } from "../../shared/config.ts";
import { type Cloud, startCloud } from "./cloud.ts";
import { deployGraphFolder, graphConfigArg, LOCAL_GRAPH_DEPLOYMENT } from "./graph-folder.ts";
import { StartupError } from "./http-util.ts";

// `npm start`: the whole platform on loopback. Ctrl-C or SIGTERM stops every part.
async function main() {
  const config = loadConfig();
  const local = config.localCloud;
  const bootAt = local.bootAt ?? performance.timeOrigin;
  // Read once and out of the environment, which every platform function's environment starts from.
  setEnvironment({ LOCAL_DYNAMODB_TOKEN: undefined });
  let cloud: Cloud | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local cloud…`);
    await cloud?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  try {
    cloud = await startCloud({
      host: local.host,
      port: local.port,
      s3Port: local.s3Port,
      dataDir: local.dataDir,
      // Benchmarks that load millions of items: DynamoDB Local in memory writes ~3× faster (nothing persists).
      inMemory: local.dynamoDbInMemory,
      dynamoDbPort: local.dynamoDbPort,
      dynamoDbEndpoint: local.dynamoDbEndpoint,
      dynamoDbToken: local.dynamoDbToken,
      apiKey: local.apiKey,
      tenantId: local.tenantId,
    });
  } catch (err) {
    if (err instanceof StartupError) {
      console.error(`error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const f = cloud.facts;
  const seconds = ((Date.now() - bootAt) / 1000).toFixed(2);
  console.log(`Agent platform ${config.version} (local cloud) ready in ${seconds} s`);
  console.log(
    `Base URL      ${f.base_url}   (control plane /v2, platform API /api/v1, agents /agents/{deployment_id})`,
  );
  console.log(`Workspace id  ${f.tenant_id}`);
  console.log(`API key       ${f.api_key}`);
  // The policy proxy: S3 and every other AWS service of the local cloud, for the operator's keys.
  console.log(
    `AWS endpoint  ${f.s3.endpoint}   (S3, DynamoDB, …) access_key_id=${f.s3.access_key_id} secret_access_key=${f.s3.secret_access_key} bucket=${f.s3.bucket}`,
  );
  console.log(`Facts for scripts: ${local.dataDir}/local.json — Ctrl-C to stop.`);
  const graphConfig = graphConfigArg(process.argv.slice(2));
  if (graphConfig) {
    console.log(`Deploying the folder of ${graphConfig} as deployment ${LOCAL_GRAPH_DEPLOYMENT}…`);
    const { deploymentId, graphs } = await deployGraphFolder({
      configPath: graphConfig,
      tenantId: f.tenant_id,
      base: f.base_url,
      apiKey: f.api_key,
      log: (line) => console.log(`  ${line}`),
    }).catch(async (err) => {
      console.error(`error: the graphs of ${graphConfig} could not be deployed: ${err?.message ?? err}`);
      await cloud?.stop();
      process.exit(1);
    });
    console.log(
      `Agent server  ${f.base_url}/agents/${LOCAL_GRAPH_DEPLOYMENT}   (deployment ${deploymentId}; graphs: ${graphs.join(", ")})`,
    );
  }
}

main().catch((err) => {
  // A setting that is not what it must be: said as it is, naming the variable, and nothing started.
  if (err instanceof ConfigError) {
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
  console.error("error: the local cloud failed to start:", err?.message ?? err);
  process.exit(1);
});
