// Public surface of the LLM trace format module: message schema, normalizers, tokens and costs.
export { DEFAULT_PRICE_MAP } from "./default-prices.ts";
export {
  type ContentBlock,
  ContentBlockSchema,
  formatIssues,
  type Message,
  MessageSchema,
  MessagesSchema,
  ROLES,
  type Role,
  type UsageMetadata,
  UsageMetadataSchema,
  type ValidationResult,
  validateMessageList,
  validateMessages,
} from "./format.ts";
export { type NormalizedLlmIO, normalizeLlmIO } from "./normalize.ts";
export { type Costs, computeCosts, findPrice, type PriceEntry, priceMatches } from "./prices.ts";
export { firstTokenTime, type LlmRunSummary, summarizeLlmRun } from "./summary.ts";
export { encodingFor, estimateTokens } from "./tokens.ts";
export { cleanUsage, extractUsage, type LlmRunLike, modelNameOf, providerOf, vendorUsage } from "./usage.ts";
