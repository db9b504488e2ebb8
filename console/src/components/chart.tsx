// A small bar chart in plain SVG: a figure with a heading, a caption that sums it up and a visually hidden
// table of every bin (what screen readers and tests read). Values are drawn as text by React only.
export interface Bin {
  /** Start of the bin (epoch ms). */
  start: number;
  /** null: no data in the bin (e.g. no runs to take a percentile of). */
  value: number | null;
}

export interface ChartProps {
  id: string;
  title: string;
  bins: Bin[];
  /** How a bin's start is written (hour or day). */
  label: (start: number) => string;
  format: (v: number) => string;
  /** One line summing the chart up (the caption). */
  summary: string;
  color?: string;
}

const W = 600;
const H = 140;
const PAD = { left: 0, right: 0, top: 4, bottom: 1 };

export function Chart({ id, title, bins, label, format, summary, color = "var(--accent)" }: ChartProps) {
  const max = Math.max(0, ...bins.map((b) => b.value ?? 0));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const bw = bins.length ? innerW / bins.length : innerW;
  const ticks = bins.length > 2 ? [0, Math.floor(bins.length / 2), bins.length - 1] : bins.map((_, i) => i);
  return (
    <figure className="chart" aria-labelledby={`${id}-h`}>
      <div className="chart-head">
        <h3 id={`${id}-h`}>{title}</h3>
        {max > 0 && <span className="muted">{`max ${format(max)}`}</span>}
      </div>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${title}: ${summary}`}
        preserveAspectRatio="none"
      >
        <line
          x1={PAD.left}
          x2={W - PAD.right}
          y1={H - PAD.bottom}
          y2={H - PAD.bottom}
          stroke="var(--border)"
        />
        {bins.map((b, i) => {
          const h = max > 0 && b.value ? (b.value / max) * innerH : 0;
          return (
            <rect
              key={b.start}
              x={PAD.left + i * bw + bw * 0.1}
              y={H - PAD.bottom - h}
              width={Math.max(1, bw * 0.8)}
              height={h}
              fill={color}
            >
              <title>{`${label(b.start)}: ${b.value === null ? "no data" : format(b.value)}`}</title>
            </rect>
          );
        })}
      </svg>
      <div className="chart-axis" aria-hidden="true">
        {ticks.map((i) => (
          <span key={i}>{label(bins[i].start)}</span>
        ))}
      </div>
      <figcaption>{summary}</figcaption>
      <table className="visually-hidden">
        <caption>{`${title} per bin`}</caption>
        <thead>
          <tr>
            <th scope="col">Bin</th>
            <th scope="col">{title}</th>
          </tr>
        </thead>
        <tbody>
          {bins.map((b) => (
            <tr key={b.start}>
              <td>{label(b.start)}</td>
              <td>{b.value === null ? "no data" : format(b.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
