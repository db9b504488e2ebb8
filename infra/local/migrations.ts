import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { dynamo } from "../../shared/aws/clients.ts";
import { tableName } from "../../shared/tables.ts";

// Bringing a DATA_DIR of an earlier version up to date at start: each step runs once per data folder (a marker
// item in the main table says it was done), before anything reads the data.

/** Runs `step` unless this data folder has run the step of that name already. */
export async function oncePerDataFolder(name: string, step: () => Promise<void>): Promise<void> {
  const TableName = tableName("main");
  const Key = { PK: { S: "PLATFORM#MIGRATIONS" }, SK: { S: name } };
  if ((await dynamo().send(new GetItemCommand({ TableName, Key }))).Item) return;
  await step();
  await dynamo().send(
    new PutItemCommand({ TableName, Item: { ...Key, at: { S: new Date().toISOString() } } }),
  );
}
