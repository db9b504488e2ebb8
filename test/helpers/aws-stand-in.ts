import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resetClients } from "../../shared/aws/clients.ts";
import { config, setEnvironment } from "../../shared/config.ts";

// For tests of calls to an AWS service the local cloud has no stand-in for (CloudWatch Logs, Lambda's control
// plane, its throttling): a loopback endpoint answering in the service's wire format, set as the service's
// endpoint with the region and credentials Lambda always provides, and everything put back afterwards.
export interface StandIn {
  close(): Promise<void>;
}

export async function standInEndpoint(endpointVar: string, handler: RequestListener): Promise<StandIn> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const set: Record<string, string> = {
    [endpointVar]: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_REGION: config.region,
    AWS_ACCESS_KEY_ID: config.text("AWS_ACCESS_KEY_ID") ?? "test",
    AWS_SECRET_ACCESS_KEY: config.text("AWS_SECRET_ACCESS_KEY") ?? "test",
  };
  const restore = setEnvironment(set);
  resetClients();
  return {
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      restore();
      resetClients();
    },
  };
}
