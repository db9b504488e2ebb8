import { exportWorkflowSettings } from "../../shared/export/workflow.ts";

// Settings in the state machines' ASL: where a file has a whole JSON string "${Name}" naming a setting, the value
// itself (a number, a list) is written in, from the same config the tasks read. Done before anything else reads
// the file: the CDK app (whose own substitutions are the ARNs) and the local engine see the same definition.
const aslSettings = (): Record<string, unknown> => ({ ...exportWorkflowSettings() });

export function renderAsl(text: string, settings: Record<string, unknown> = aslSettings()): string {
  return text.replace(/"\$\{(\w+)\}"/g, (whole, name: string) =>
    Object.hasOwn(settings, name) ? JSON.stringify(settings[name]) : whole,
  );
}
