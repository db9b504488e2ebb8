// Non-HTTP functions: workflow tasks (ASL Task states name them as ${<name>FunctionArn}), async workers
// and schedule targets. One Lambda each in AWS; called in-process by the local cloud.
export interface TaskFunction {
  name: string;
  /** Module under functions/ (without .ts) exporting `handler(event)`. */
  handler: string;
  timeoutSeconds: number;
  memoryMb?: number;
}

export const tasks: TaskFunction[] = [];

export type TaskHandler = (event: any) => Promise<unknown>;

export async function loadTask(task: Pick<TaskFunction, "handler">): Promise<TaskHandler> {
  const mod = (await import(`./${task.handler}.ts`)) as { handler?: TaskHandler };
  if (typeof mod.handler !== "function") throw new Error(`functions/${task.handler}.ts exports no handler`);
  return mod.handler;
}

/** The function a name or ARN (arn:aws:lambda:…:function:<name>) refers to. */
export function taskByName(nameOrArn: string): TaskFunction | undefined {
  const name = nameOrArn.split(":function:").pop()!.split(":")[0];
  return tasks.find((t) => t.name === name || `${t.name}Function` === name);
}
