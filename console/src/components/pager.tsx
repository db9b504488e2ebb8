import { useState } from "react";

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
