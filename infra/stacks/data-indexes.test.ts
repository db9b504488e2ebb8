import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { projectionOf, TABLES, type TableDef } from "../../shared/tables.ts";
import { DataStack } from "./data-stack.ts";
import { ROOT } from "./node-function.ts";

// Issue 26: the tables' indexes in the template are shared/tables.ts's, projections included; an index whose
// readers read the item from the table anyway holds only what they check (a write that changes nothing else
// writes nothing to it).
describe("the data stack's indexes", () => {
  const context = JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context;
  const template = Template.fromStack(new DataStack(new App({ context }), "Data"));
  const tables = Object.values(template.findResources("AWS::DynamoDB::Table"));
  const indexesOf = (def: TableDef) =>
    tables.find((t) =>
      (def.indexes ?? []).every((i) =>
        (t.Properties.GlobalSecondaryIndexes ?? []).some((g: any) => g.IndexName === i.name),
      ),
    )?.Properties.GlobalSecondaryIndexes ?? [];

  it("project what shared/tables.ts says, the one source the local cloud creates them from too", () => {
    for (const def of Object.values(TABLES) as TableDef[])
      for (const i of def.indexes ?? [])
        expect(indexesOf(def).find((g: any) => g.IndexName === i.name)?.Projection).toEqual(projectionOf(i));
  });

  it("hold of the agent records' index only the ids its readers check and a run's status", () => {
    const agent = indexesOf(TABLES.main).find((g: any) => g.IndexName === "AGENT1");
    expect(agent.Projection.ProjectionType).toBe("INCLUDE");
    expect([...agent.Projection.NonKeyAttributes].sort()).toEqual([
      "cron_id",
      "run_id",
      "status",
      "thread_id",
    ]);
  });
});
