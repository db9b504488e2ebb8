import { z } from "zod";

// Query strings arrive as text; these parse them the way FastAPI-style clients expect.
export const qInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, "Input should be a valid integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const qBool = () =>
  z
    .enum(["true", "false", "1", "0", "True", "False"], { message: "Input should be a valid boolean" })
    .transform((v) => v === "true" || v === "1" || v === "True");

/** A flag from a query string ("1"/"true", "0"/"false") or a JSON boolean. */
export const qFlag = z.preprocess(
  (v) => (v === "1" || v === "true" ? true : v === "0" || v === "false" ? false : v),
  z.boolean(),
);

export const qCsv = () =>
  z.string().transform((v) =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
