import { inject } from "vitest";

/**
 * The test run's DynamoDB Local and its token, for platforms a test starts of its own (harness/platform.ts): each keeps
 * its tables there under a prefix of its own instead of starting a DynamoDB Local per start, and its own policy
 * proxy adds the token. Imported apart from helpers/cloud.ts, whose environment would reach those platforms through
 * process.env.
 */
export const sharedDynamoDb = () => ({ ...inject("backends").dynamodb });
