import { readFile } from "node:fs/promises";
import { defineHandler } from "../handler.ts";

// The document is made when the functions are bundled (infra/build/openapi-document.ts) and lies beside this
// function's bundle: it is served as it was made, without loading every handler of the platform.
const DOCUMENT = new URL("./openapi.json", import.meta.url);
let doc: Promise<unknown> | undefined;

export const handler = defineHandler({
  handle: async () => {
    doc ??= readFile(DOCUMENT, "utf8").then((text) => JSON.parse(text) as unknown);
    return doc;
  },
});
