import { z } from "zod";
import { queryRuns } from "../../../shared/runs/query.ts";
import { optional, RunFilterFields, runFilters } from "../../../shared/runs/query-body.ts";
import { RUN_FIELDS } from "../../../shared/runs/wire.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: z.looseObject({
    ...RunFilterFields,
    select: optional(
      z
        .array(
          z.enum(RUN_FIELDS, {
            error: (i) =>
              `${JSON.stringify(i.input)} is not a run field here; fields: ${RUN_FIELDS.join(", ")}`,
          }),
        )
        .max(RUN_FIELDS.length * 2),
    ),
    order: optional(z.enum(["asc", "desc"])),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .nullish()
      .transform((v) => v ?? 100),
    cursor: optional(z.string()),
  }),
  handle: ({ body, tenantId }) => queryRuns(tenantId, runFilters(body)),
});
