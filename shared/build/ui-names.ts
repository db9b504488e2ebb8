// The names of langgraph.json's ui entries: a URL segment and a folder of the artifact (shared/agent/ui/ui.ts serves
// them), and the browser global each bundle defines (shared/build/ui-bundle.ts builds them).

/**
 * Whether a ui name (any string the reference accepts) can be one URL segment and one folder of the artifact: no
 * separator, control character or lone surrogate, not `.` or `..`, 1 to 128 characters.
 */
export function isUiName(name: string): boolean {
  const chars = [...name];
  if (chars.length < 1 || chars.length > 128 || name === "." || name === "..") return false;
  if (!chars.every((c) => c !== "/" && c !== "\\" && c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f))
    return false;
  // A lone surrogate has no UTF-8 form: no URL (encodeURIComponent throws) and no S3 key.
  try {
    encodeURIComponent(name);
    return true;
  } catch {
    return false;
  }
}

/** The global a ui bundle defines, as the reference names it: `__LGUI_<name>`, non-identifier characters as `_`. */
export const uiGlobal = (name: string) => `__LGUI_${name.replace(/[^A-Za-z0-9_$]/g, "_")}`;
