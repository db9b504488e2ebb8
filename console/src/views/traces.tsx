// Placeholder until the view is built (issue 18).
export function Traces(_: { route: string[] }) {
  return <h1>Traces</h1>;
}
