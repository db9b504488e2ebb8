import { type ComponentType, lazy } from "react";
import { Deployments } from "./deployments.tsx";
import { Exports } from "./exports.tsx";
import { Playground } from "./playground.tsx";
import { Traces } from "./traces.tsx";

// The studio's code (graph layout and drawing included) is a chunk fetched when it is first opened.
const Studio = lazy(() => import("./studio/index.tsx"));

/** The console's sections: `#/<path>/...`; each view gets the rest of the route. */
export interface Section {
  path: string;
  title: string;
  component: ComponentType<{ route: string[] }>;
}

export const VIEWS: Section[] = [
  { path: "traces", title: "Traces", component: Traces },
  { path: "exports", title: "Exports", component: Exports },
  { path: "deployments", title: "Deployments", component: Deployments },
  { path: "studio", title: "Studio", component: Studio },
  { path: "playground", title: "Playground", component: Playground },
];
