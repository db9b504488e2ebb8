// Placeholder until the view is built (issue 18).
export function Exports(_: { route: string[] }) {
  return <h1>Exports</h1>;
}
