import { useEffect, useState } from "react";
import { errorText } from "../format.ts";

/** Pages read through a cursor: where each page seen starts (page 0 at the top), and which one is shown. */
export function useCursorPages() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [pageIndex, setPageIndex] = useState(0);
  return {
    cursor: cursors[pageIndex],
    pageIndex,
    reset: () => {
      setCursors([undefined]);
      setPageIndex(0);
    },
    newer: () => setPageIndex((i) => i - 1),
    older: (next: string | undefined) => {
      setCursors((c) => [...c.slice(0, pageIndex + 1), next]);
      setPageIndex((i) => i + 1);
    },
  };
}

/** One page of a list: its items and the cursor of the next, or the error that stopped the read. */
export interface CursorPage<T> {
  items?: T[];
  next?: string | null;
  error?: string;
  loading: boolean;
}

/**
 * The page at `cursor`, read by `read` again whenever the cursor or `deps` change; a read overtaken by a newer
 * one is dropped (its signal aborted).
 */
export function useCursorPage<T>(
  cursor: string | undefined,
  read: (cursor: string | undefined, signal: AbortSignal) => Promise<{ items: T[]; next: string | null }>,
  deps: unknown[],
): CursorPage<T> {
  const [state, setState] = useState<CursorPage<T>>({ loading: true });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the cursor and the caller's deps decide a read
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    read(cursor, ctl.signal)
      .then((page) => setState({ items: page.items, next: page.next, loading: false }))
      .catch((e) => {
        if (!ctl.signal.aborted) setState({ error: errorText(e), loading: false });
      });
    return () => ctl.abort();
  }, [cursor, ...deps]);
  return state;
}

/** Newer / Older buttons over a list read through a cursor. */
export function Pager({
  pages,
  next,
  loading,
}: {
  pages: ReturnType<typeof useCursorPages>;
  next: string | null | undefined;
  loading: boolean;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={pages.pageIndex === 0} onClick={pages.newer}>
        Newer
      </button>
      <span>{`Page ${pages.pageIndex + 1}`}</span>
      <button type="button" disabled={!next || loading} onClick={() => pages.older(next ?? undefined)}>
        Older
      </button>
    </nav>
  );
}
