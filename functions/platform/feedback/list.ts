import { z } from "zod";
import { qCsv, qInt } from "../../../shared/http/query.ts";
import { FeedbackOut, listFeedback } from "../../../shared/runs/feedback.ts";
import { RunId } from "../../../shared/runs/schema.ts";
import { defineHandler } from "../../handler.ts";

// A repeated `run`, `key` or `source` arrives comma-joined. Other filters of the hosted API (session,
// has_comment, has_score, level, user) are refused rather than ignored.
const refused = (what: string) =>
  z.never({ error: `filtering feedback by ${what} is not supported here` }).optional();

export const handler = defineHandler({
  query: z.looseObject({
    run: qCsv().pipe(z.array(RunId).max(100)).optional(),
    key: qCsv()
      .pipe(z.array(z.string().max(180)).max(100))
      .optional(),
    source: qCsv()
      .pipe(z.array(z.string().max(64)).max(20))
      .optional(),
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 10_000).optional(),
    session: refused("project"),
    has_comment: refused("comment"),
    has_score: refused("score"),
    level: refused("level"),
    user: refused("user"),
  }),
  response: z.array(FeedbackOut),
  handle: ({ tenantId, query }) =>
    listFeedback(tenantId, {
      runs: query.run,
      keys: query.key,
      sources: query.source,
      limit: query.limit ?? 100,
      offset: query.offset ?? 0,
    }),
});
