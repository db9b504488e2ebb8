// Placeholder until the view is built (issue 18).
export function Deployments(_: { route: string[] }) {
  return <h1>Deployments</h1>;
}
