import type { z } from "zod";
import type { ValidationIssue } from "../errors.ts";

// zod issues in the HTTPValidationError shape: loc starts with where the value came from.
const TYPE_NAMES: Record<string, string> = {
  string: "string_type",
  number: "float_type",
  int: "int_type",
  boolean: "bool_type",
  object: "dict_type",
  array: "list_type",
};

export function toValidationIssues(source: string, error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => {
    const loc = [source, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
    if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) {
      return { loc, msg: "Field required", type: "missing" };
    }
    if (issue.code === "invalid_type") {
      return { loc, msg: issue.message, type: TYPE_NAMES[String(issue.expected)] ?? "type_error" };
    }
    if (issue.code === "unrecognized_keys") {
      return { loc, msg: issue.message, type: "extra_forbidden" };
    }
    return { loc, msg: issue.message, type: issue.code === "custom" ? "value_error" : issue.code };
  });
}
