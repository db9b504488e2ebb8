import { config } from "../../shared/config.ts";
import { openApiDocument } from "../../shared/http/openapi.ts";
import { defineHandler } from "../handler.ts";
import { loadHandler } from "../modules/routes.ts";
import { routes } from "../routes.ts";

let doc: unknown;

export const handler = defineHandler({
  handle: async () => {
    doc ??= openApiDocument(
      "Agent platform",
      config.version,
      await Promise.all(routes.map(async (r) => ({ ...r, handler: await loadHandler(r) }))),
    );
    return doc;
  },
});
