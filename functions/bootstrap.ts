import { loadConfig } from "../shared/config.ts";

// Every Lambda bundle's first module (esbuild's inject, infra/build/function-bundles.ts): the function's one parse of
// its settings, at init, before its handler's modules run. A bad value fails the init with an error naming the
// variable and what it expected, instead of a function that runs on a fallback.
loadConfig();
