import { useState } from "react";
import type { Session } from "../api.ts";

// The API key and workspace are asked once and kept in the browser's session storage (gone with the tab).
export function SignIn({ onSignIn }: { onSignIn: (s: Session) => void }) {
  const [apiKey, setApiKey] = useState("");
  const [tenantId, setTenantId] = useState("");
  const [error, setError] = useState<string>();
  return (
    <main className="sign-in">
      <h1>Agent platform console</h1>
      <form
        aria-label="Sign in"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(undefined);
          const r = await fetch("/api/v1/sessions?limit=1", {
            headers: { "X-Api-Key": apiKey, ...(tenantId ? { "X-Tenant-Id": tenantId } : {}) },
          });
          if (r.ok) onSignIn({ apiKey, tenantId });
          else
            setError(
              r.status === 401 || r.status === 403
                ? "The key is not valid for that workspace"
                : `HTTP ${r.status}`,
            );
        }}
      >
        <label>
          API key
          <input
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            required
          />
        </label>
        <label>
          Workspace id (optional)
          <input value={tenantId} onChange={(e) => setTenantId(e.target.value)} />
        </label>
        <button type="submit">Sign in</button>
        {error && <p role="alert">{error}</p>}
      </form>
    </main>
  );
}
