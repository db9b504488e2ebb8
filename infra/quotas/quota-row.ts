// One row of the quota checks (template checks here, bundle sizes elsewhere): rows of every check concatenate.

export interface QuotaRow {
  /** What is checked, e.g. "Lambda resource-based policy size (bytes)". */
  check: string;
  /** The function, role, stack, API or state machine it is checked for. */
  subject: string;
  /** What the synthesized app has (Infinity: no bound could be computed). */
  value: number;
  /** AWS's limit. */
  limit: number;
  ok: boolean;
  /** The AWS documentation page the limit comes from. */
  doc: string;
}

export const quotaRow = (
  check: string,
  subject: string,
  value: number,
  limit: number,
  doc: string,
): QuotaRow => ({
  check,
  subject,
  value,
  limit,
  ok: value <= limit,
  doc,
});

/** The rows as a plain-text table (failures marked), for `npm run aws:preflight`. */
export function formatQuotaTable(rows: QuotaRow[]): string {
  const cells = rows.map((r) => [
    r.check,
    r.subject,
    Number.isFinite(r.value) ? String(r.value) : "unbounded",
    String(r.limit),
    r.ok ? "ok" : "FAIL",
  ]);
  const header = ["check", "subject", "value", "limit", "ok"];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    c.map((v, i) => (i === 2 || i === 3 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}
