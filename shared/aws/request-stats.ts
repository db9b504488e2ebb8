import type { AttributeValue, TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { config } from "../config.ts";
import { itemBytes, type WriteInput, writeUnits } from "./write-units.ts";

// Request accounting for cost estimates (npm run bench -- agent): with PLATFORM_COUNT_REQUESTS=1 every DynamoDB
// call asks for its consumed capacity and every call to DynamoDB and S3 is counted, per process (=shapes: and
// each write's shape). Off by default.
export interface RequestStats {
  dynamodb: {
    requests: number;
    read_units: number;
    write_units: number;
    /** Write units by DynamoDB's billing rules, worked out from the requests (write-units.ts). */
    billed_write_units: number;
    /** Per command: requests, units as the store reported them, and billed write units. */
    commands: Record<string, { requests: number; units: number; billed: number }>;
    /** Writes by shape (PLATFORM_COUNT_REQUESTS=shapes). */
    shapes: Record<string, number>;
  };
  s3: { requests: number; puts: number; gets: number };
}

const emptyStats = (): RequestStats => ({
  dynamodb: { requests: 0, read_units: 0, write_units: 0, billed_write_units: 0, commands: {}, shapes: {} },
  s3: { requests: 0, puts: 0, gets: 0 },
});
/**
 * This thread's counts, on a global under a registered symbol: the local cloud's Lambda environments (worker
 * threads, infra/local/function-worker.mjs) hand theirs to the local cloud after each invocation.
 */
export const REQUEST_STATS_KEY = Symbol.for("agent-platform.request-stats");
const holder = globalThis as { [REQUEST_STATS_KEY]?: RequestStats };
holder[REQUEST_STATS_KEY] ??= emptyStats();
const stats = holder[REQUEST_STATS_KEY];
export const requestStats = (): RequestStats => structuredClone(stats);

/** The counts of several processes or threads added up. */
export function addRequestStats(...all: RequestStats[]): RequestStats {
  const sum = emptyStats();
  const add = (to: Record<string, number>, from: Record<string, number>) => {
    for (const [k, v] of Object.entries(from)) to[k] = (to[k] ?? 0) + v;
  };
  for (const s of all) {
    const { commands, shapes, ...units } = s.dynamodb;
    add(sum.dynamodb as unknown as Record<string, number>, units);
    for (const [name, c] of Object.entries(commands)) {
      sum.dynamodb.commands[name] ??= { requests: 0, units: 0, billed: 0 };
      add(
        sum.dynamodb.commands[name] as unknown as Record<string, number>,
        c as unknown as Record<string, number>,
      );
    }
    add(sum.dynamodb.shapes, shapes);
    add(sum.s3 as unknown as Record<string, number>, s.s3 as unknown as Record<string, number>);
  }
  return sum;
}

type Capacity = { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number };
/** A client middleware of the initialize step, whatever the client's command inputs and outputs. */
type Middleware = <I extends object, R extends { output: object }>(
  next: (args: { input: I }) => Promise<R>,
  context: { commandName?: string },
) => (args: { input: I }) => Promise<R>;
const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;

/** A DynamoDB client middleware (initialize step): ReturnConsumedCapacity TOTAL on each call, units added up. */
export const dynamoCounter: Middleware = (next, context) => async (args) => {
  // The input and output of a DynamoDB command (this middleware is on the DynamoDB client only).
  const input = args.input as WriteInput & { ReturnConsumedCapacity?: string };
  input.ReturnConsumedCapacity ??= "TOTAL";
  const out = await next(args);
  stats.dynamodb.requests++;
  const read = READS.test(context.commandName ?? "");
  const consumed = (out.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  const each = list.map((c) => c.CapacityUnits ?? (c.ReadCapacityUnits ?? 0) + (c.WriteCapacityUnits ?? 0));
  // DynamoDB Local repeats a whole transaction's units under each table it touches; DynamoDB splits them. A
  // transaction's units are counted once, as the largest entry (exact on DynamoDB for one-table transactions).
  const units = /^Transact/.test(context.commandName ?? "")
    ? Math.max(0, ...each)
    : each.reduce((a, b) => a + b, 0);
  const billed = read ? 0 : (writeUnits(context.commandName ?? "", input) ?? units);
  if (read) stats.dynamodb.read_units += units;
  else {
    stats.dynamodb.write_units += units;
    stats.dynamodb.billed_write_units += billed;
  }
  const name = context.commandName ?? "?";
  const c = stats.dynamodb.commands[name] ?? { requests: 0, units: 0, billed: 0 };
  stats.dynamodb.commands[name] = {
    requests: c.requests + 1,
    units: c.units + units,
    billed: c.billed + billed,
  };
  if (config.countRequests === "shapes") countShapes(name, input);
  return out;
};

/**
 * PLATFORM_COUNT_REQUESTS=shapes also counts the writes by shape, to see what a cost is made of: a transaction as
 * its items (operation, table, sort key with ids as `*`, size), a batch write's items one by one.
 */
type Item = Record<string, AttributeValue>;

/** A transaction item's operation and its body (each item holds one). */
function operation(t: TransactWriteItem): [string, { TableName?: string; Item?: Item; Key?: Item }] {
  if (t.Put) return ["Put", t.Put];
  if (t.Delete) return ["Delete", t.Delete];
  if (t.Update) return ["Update", t.Update];
  return ["ConditionCheck", t.ConditionCheck ?? {}];
}

function countShapes(command: string, input: WriteInput) {
  const sk = (item: Item = {}) => String(item.SK?.S ?? "").replace(/[0-9a-f-]{8,}/g, "*");
  const shapes: string[] = [];
  if (command === "TransactWriteItemsCommand")
    shapes.push(
      (input.TransactItems ?? [])
        .map((t) => {
          const [op, body] = operation(t);
          const size = body.Item ? ` ${itemBytes(body.Item)} B` : "";
          return `${op} ${body.TableName} ${sk(body.Item ?? body.Key)}${size}`;
        })
        .join(" + "),
    );
  if (command === "BatchWriteItemCommand")
    for (const [table, reqs] of Object.entries(input.RequestItems ?? {}))
      for (const r of reqs)
        if (r.PutRequest?.Item)
          shapes.push(`BatchPut ${table} ${sk(r.PutRequest.Item)} ${itemBytes(r.PutRequest.Item)} B`);
  for (const shape of shapes) stats.dynamodb.shapes[shape] = (stats.dynamodb.shapes[shape] ?? 0) + 1;
}

/** An S3 client middleware counting requests (PUT-class and GET-class are priced apart). */
export const s3Counter: Middleware = (next, context) => async (args) => {
  const out = await next(args);
  stats.s3.requests++;
  if (/^(Put|Copy|Create|Upload|Complete|List)/.test(context.commandName ?? "")) stats.s3.puts++;
  else stats.s3.gets++;
  return out;
};

/** Adds the counters to a client when PLATFORM_COUNT_REQUESTS is set. */
export function counted<
  C extends { middlewareStack: { add(m: Middleware, o: { step: "initialize"; name: string }): void } },
>(client: C, counter: Middleware): C {
  if (config.countRequests !== undefined)
    client.middlewareStack.add(counter, { step: "initialize", name: "countRequests" });
  return client;
}
