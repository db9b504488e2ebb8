import { useCallback, useEffect, useState } from "react";
import type { AgentServer } from "../../agent-api.ts";
import { JsonBlock, JsonEditor } from "../../components/json-editor.tsx";
import { useAction } from "../../hooks.ts";
import type { StoreItem } from "../../wire.ts";
import { parseJson } from "./schema-form.ts";

// The deployment's long-term memory store: namespaces browsed, items of one listed or searched (`query` ranks by
// meaning where the deployment's store.index is set), an item put or deleted.

const split = (ns: string) =>
  ns
    .split(".")
    .map((s) => s.trim())
    .filter(Boolean);

export function StoreTab({ server }: { server: AgentServer }) {
  const [namespaces, setNamespaces] = useState<string[][]>();
  const [namespace, setNamespace] = useState("");
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<StoreItem[]>();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("{}");
  const parsed = parseJson(value);
  const valueProblems = parsed.error
    ? [parsed.error]
    : parsed.value && typeof parsed.value === "object" && !Array.isArray(parsed.value)
      ? []
      : ["A store value is a JSON object"];

  const loadNamespaces = useCallback(
    () => server.storeNamespaces().then((r) => setNamespaces(r.namespaces)),
    [server],
  );
  const readItems = (ns = namespace) =>
    server.storeSearch(split(ns), query || undefined).then((r) => setItems(r.items));
  const { error, setError, act } = useAction(() => Promise.all([readItems(), loadNamespaces()]));
  useEffect(() => void loadNamespaces().catch((e) => setError(e.message)), [loadNamespaces, setError]);
  // A search reads only the items (an action's re-read of `namespace` would be the one before a click set it).
  const search = async (ns = namespace) => {
    setError(undefined);
    await readItems(ns).catch((e) => setError(e.message));
  };

  return (
    <section className="card" aria-label="Store">
      <h2>Store</h2>
      {error && <p role="alert">{error}</p>}
      <div className="st-grid">
        <NamespaceList
          namespaces={namespaces}
          onOpen={(ns) => {
            setNamespace(ns);
            void search(ns);
          }}
        />
        <div>
          <form
            className="studio-search"
            aria-label="Search the store"
            onSubmit={(e) => {
              e.preventDefault();
              void search();
            }}
          >
            <label>
              Namespace (labels joined by .)
              <input
                value={namespace}
                onChange={(e) => setNamespace(e.target.value)}
                placeholder="users.ada"
              />
            </label>
            <label>
              Query (semantic search)
              <input value={query} onChange={(e) => setQuery(e.target.value)} />
            </label>
            <button type="submit">Search</button>
          </form>
          <ItemList
            items={items}
            onEdit={(it) => {
              setNamespace(it.namespace.join("."));
              setKey(it.key);
              setValue(JSON.stringify(it.value, null, 2));
            }}
            onDelete={(it) => void act(server.storeDelete(it.namespace, it.key))}
          />
          <form
            className="st-put"
            aria-label="Put an item"
            onSubmit={(e) => {
              e.preventDefault();
              if (!valueProblems.length && key && split(namespace).length)
                void act(server.storePut(split(namespace), key, parsed.value));
            }}
          >
            <h3>Put an item</h3>
            <label>
              Key
              <input value={key} onChange={(e) => setKey(e.target.value)} />
            </label>
            <JsonEditor label="Value" value={value} onChange={setValue} problems={valueProblems} rows={4} />
            <button
              type="submit"
              className="primary"
              disabled={!key || !split(namespace).length || valueProblems.length > 0}
            >
              Put item
            </button>
          </form>
        </div>
      </div>
    </section>
  );
}

/** The store's namespaces; one opened lists its items. */
function NamespaceList({ namespaces, onOpen }: { namespaces?: string[][]; onOpen: (ns: string) => void }) {
  return (
    <nav aria-label="Namespaces">
      <h3>Namespaces</h3>
      {namespaces?.length === 0 && <p className="muted">The store is empty.</p>}
      <ul>
        {namespaces?.map((ns) => (
          <li key={ns.join(".")}>
            <button type="button" className="link" onClick={() => onOpen(ns.join("."))}>
              {ns.join(" › ")}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The items found, each with its score (a semantic search) and its edit and delete buttons. */
function ItemList({
  items,
  onEdit,
  onDelete,
}: {
  items?: StoreItem[];
  onEdit: (it: StoreItem) => void;
  onDelete: (it: StoreItem) => void;
}) {
  return (
    <>
      {items?.length === 0 && <p className="muted">No items.</p>}
      <ul className="st-items" aria-label="Items">
        {items?.map((it) => (
          <li key={`${it.namespace.join(".")}/${it.key}`}>
            <div className="sg-head">
              <strong>
                {it.namespace.join(" › ")} › {it.key}
              </strong>
              {typeof it.score === "number" && <span className="muted">score {it.score.toFixed(3)}</span>}
              <button type="button" className="link" onClick={() => onEdit(it)}>
                Edit {it.key}
              </button>
              <button type="button" className="link" onClick={() => onDelete(it)}>
                Delete {it.key}
              </button>
            </div>
            <JsonBlock value={it.value} />
          </li>
        ))}
      </ul>
    </>
  );
}
