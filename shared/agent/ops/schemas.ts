// The wire schemas of the agent server's routes (what handlers validate requests and answers with), re-exported
// for the handlers: functions/agent/** reach shared/agent through the operations layer only (layering.test.ts).
export * from "../assistants/api.ts";
export { Assistant } from "../assistants/assistants.ts";
export * from "../crons/schemas.ts";
export * from "../runs/schemas.ts";
export {
  storeDelete,
  storeGet,
  storeItemResponse,
  storeNamespaces,
  storeNamespacesResponse,
  storePut,
  storeSearch,
  storeSearchResponse,
} from "../store/api.ts";
