import { NotFound } from "../../../shared/errors.ts";
import { RunId } from "../../../shared/runs/schema.ts";
import { getRunItem } from "../../../shared/runs/store.ts";
import { toWire } from "../../../shared/runs/wire.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ run_id: RunId }),
  handle: async ({ params, tenantId }) => {
    const item = await getRunItem(tenantId, params.run_id);
    if (!item) throw new NotFound("Run not found");
    return toWire(item);
  },
});
