import { useCallback, useEffect, useState } from "react";
import { ApiError, headers } from "../api.ts";
import type { BulkExport, ExportStatus } from "../wire.ts";

/** Statuses after which an export (or a run) no longer changes. */
export const FINAL: ReadonlySet<string> = new Set<ExportStatus>([
  "Completed",
  "Failed",
  "Cancelled",
  "TimedOut",
]);

const PAGE = 50;

/**
 * The exports, newest first, a page at a time: the list answers `X-Pagination-Next` (the offset to ask next)
 * when more follow, so `more()` reads the next page and appends it.
 */
export function useExportPages() {
  const [items, setItems] = useState<BulkExport[]>([]);
  const [next, setNext] = useState<number | undefined>(0);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const read = useCallback(async (offset: number, replace: boolean) => {
    setLoading(true);
    try {
      const r = await fetch(`/api/v1/bulk-exports?limit=${PAGE}&offset=${offset}`, { headers: headers() });
      const json = await r.json().catch(() => undefined);
      if (!r.ok) throw new ApiError(r.status, json?.detail ?? json ?? r.statusText);
      const n = r.headers.get("x-pagination-next");
      setNext(n ? Number(n) : undefined);
      setItems((old) => (replace ? json : [...old, ...json]));
      setError(undefined);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    read(0, true);
  }, [read]);
  const reload = useCallback(() => read(0, true), [read]);
  return {
    items,
    error,
    loading,
    /** Only the first page is shown (a re-read replaces it without losing pages read after it). */
    firstPageOnly: items.length <= PAGE,
    hasMore: next !== undefined,
    more: () => next !== undefined && read(next, false),
    reload,
  };
}

/** A run's day (`2026-04-01`), with its UTC time when the window does not start at midnight. */
export function dayOrTime(iso: string): string {
  const t = new Date(iso).toISOString();
  return t.slice(11, 16) === "00:00" ? t.slice(0, 10) : `${t.slice(0, 10)} ${t.slice(11, 16)}`;
}
/** A window bound in UTC, as the export's days are cut: `2026-04-01 00:00 UTC`. */
export const utc = (iso: string | null) =>
  iso ? `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC` : "—";

/** An export's window: its start and end (or "every N h from start" for a scheduled one). */
export function windowText(e: Pick<BulkExport, "interval_hours" | "start_time" | "end_time">): string {
  if (e.interval_hours) return `every ${e.interval_hours} h from ${utc(e.start_time)}`;
  return `${utc(e.start_time)} → ${utc(e.end_time)}`;
}
