import type { LambdaHttpHandler } from "../shared/http/handler.ts";

/**
 * Handler modules by name (functions/<name>.ts), each behind a static `import()`: esbuild bundles exactly the
 * modules a map names, so a Lambda whose entry imports one map carries only those handlers' import graphs
 * (a template-literal import made it bundle every file under functions/, tests included).
 */
export type ModuleMap = Readonly<Record<string, () => Promise<unknown>>>;

/** The `handler` export of the module `name` in `modules`. */
export async function handlerFrom<H = LambdaHttpHandler>(modules: ModuleMap, name: string): Promise<H> {
  const load = Object.hasOwn(modules, name) ? modules[name] : undefined;
  if (!load) throw new Error(`functions/${name}.ts is not among the modules this function loads`);
  const mod = (await load()) as { handler?: H };
  if (typeof mod.handler !== "function") throw new Error(`functions/${name}.ts exports no handler`);
  return mod.handler;
}
