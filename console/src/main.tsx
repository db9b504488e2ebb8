import "./app.css";
import { StrictMode, Suspense, useState } from "react";
import { createRoot } from "react-dom/client";
import { loadSession, type Session, saveSession } from "./api.ts";
import { href, useRoute } from "./router.ts";
import { VIEWS } from "./views/index.ts";
import { SignIn } from "./views/sign-in.tsx";

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const route = useRoute();
  if (!session)
    return (
      <SignIn
        onSignIn={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  const section = VIEWS.find((v) => v.path === route[0]) ?? VIEWS[0];
  const View = section.component;
  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Agent platform</span>
        <nav aria-label="Sections">
          {VIEWS.map((v) => (
            <a key={v.path} href={href(v.path)} aria-current={v === section ? "page" : undefined}>
              {v.title}
            </a>
          ))}
        </nav>
        <button
          type="button"
          className="link"
          onClick={() => {
            saveSession(undefined);
            setSession(undefined);
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <Suspense fallback={<p className="muted">Loading…</p>}>
          <View route={route.slice(1)} />
        </Suspense>
      </main>
    </div>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
