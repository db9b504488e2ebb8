import "./studio.css";
import { useEffect, useMemo, useState } from "react";
import { type AgentServer, agentServer } from "../../agent-api.ts";
import { AssistantSelect } from "../../components/assistant-select.tsx";
import { DeploymentPicker } from "../../components/deployment-picker.tsx";
import { useApi } from "../../hooks.ts";
import { href } from "../../router.ts";
import type { Assistant, Deployment } from "../../wire.ts";
import { Playground } from "../playground.tsx";
import { AssistantsTab } from "./assistants-tab.tsx";
import { CronsTab } from "./crons-tab.tsx";
import { GraphTab } from "./graph-tab.tsx";
import { StoreTab } from "./store-tab.tsx";
import { ThreadsTab } from "./threads-tab.tsx";

// The agent studio (#/studio/<deployment>/<assistant>/<thread>), loaded only when opened: a deployment's graphs
// drawn and run, their threads walked and forked, assistants, store and crons managed; the chat mode is the
// playground.

const TABS = ["Graph", "Chat", "Threads", "Assistants", "Store", "Crons"] as const;
type Tab = (typeof TABS)[number];

export default function Studio({ route }: { route: string[] }) {
  const [deploymentId, assistantId, threadId] = route;
  if (!deploymentId)
    return (
      <DeploymentPicker
        section="studio"
        title="Studio"
        intro="See a deployment's graphs, run them, walk their threads."
        className="studio"
      />
    );
  return (
    <Workspace key={deploymentId} deploymentId={deploymentId} assistantId={assistantId} threadId={threadId} />
  );
}

function Workspace(props: { deploymentId: string; assistantId?: string; threadId?: string }) {
  const { deploymentId } = props;
  const server = useMemo(() => agentServer(deploymentId), [deploymentId]);
  const [assistants, setAssistants] = useState<Assistant[]>();
  const [assistantId, setAssistantId] = useState(props.assistantId);
  const [threadId, setThreadId] = useState(props.threadId);
  const [chosenTab, setTab] = useState<Tab>("Graph");
  const [error, setError] = useState<string>();
  const [version, setVersion] = useState(0);
  // The deployment's tracing project, where each of its runs is a trace named by the run's id. "local" (the
  // gateway's name for the deployment `npm start -- --graph` made) is no id the control plane takes: opened
  // from the deployments list, the studio names that deployment by its id.
  const deployment = useApi<Deployment>(
    deploymentId === "local" ? undefined : `/v2/deployments/${encodeURIComponent(deploymentId)}`,
  );
  const projectId = deployment.data?.tracing_project_id;

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` says the assistants changed
  useEffect(() => {
    server.assistants().then(
      (list) => {
        setAssistants(list);
        setAssistantId((id) => (id && list.some((a) => a.assistant_id === id) ? id : list[0]?.assistant_id));
      },
      (e) => setError(e.message),
    );
  }, [server, version]);

  // The address names what is shown, so a reload or a shared link opens the same assistant and thread.
  useEffect(() => {
    const parts = [
      "studio",
      deploymentId,
      ...(assistantId ? [assistantId] : []),
      ...(assistantId && threadId ? [threadId] : []),
    ];
    window.history.replaceState(null, "", href(...parts));
  }, [deploymentId, assistantId, threadId]);

  const assistant = assistants?.find((a) => a.assistant_id === assistantId);
  // The chat mode is for graphs whose state holds `messages`; every graph has the graph mode.
  const chatty = useHasMessages(server, assistantId);
  const tabs = TABS.filter((t) => t !== "Chat" || chatty);
  const tab = tabs.includes(chosenTab) ? chosenTab : "Graph";
  return (
    <section className="studio">
      <h1>Studio</h1>
      <p className="muted">
        Deployment <code>{deploymentId}</code> · <a href={href("studio")}>another deployment</a>
      </p>
      {error && <p role="alert">{error}</p>}
      <div className="studio-bar">
        <div className="studio-field">
          <label htmlFor="studio-assistant">Assistant</label>
          <AssistantSelect
            id="studio-assistant"
            assistants={assistants}
            value={assistantId}
            onChange={(id) => {
              setAssistantId(id);
              setThreadId(undefined);
            }}
          />
        </div>
        <TabList tabs={tabs} tab={tab} onTab={setTab} />
      </div>
      <div role="tabpanel" id="studio-panel" aria-labelledby={`studio-tab-${tab}`}>
        {tab === "Graph" && assistant && (
          <GraphTab
            key={assistant.assistant_id}
            server={server}
            assistant={assistant}
            threadId={threadId}
            onThread={setThreadId}
            traceLink={(runId) => (projectId ? href("traces", projectId, "trace", runId) : undefined)}
          />
        )}
        {tab === "Chat" && <Playground route={assistantId ? [deploymentId, assistantId] : [deploymentId]} />}
        {tab === "Threads" && (
          <ThreadsTab
            server={server}
            assistant={assistant}
            onOpen={(id, by) => {
              if (by && assistants?.some((a) => a.assistant_id === by)) setAssistantId(by);
              setThreadId(id);
              setTab("Graph");
            }}
          />
        )}
        {tab === "Assistants" && (
          <AssistantsTab
            server={server}
            assistants={assistants ?? []}
            onChanged={() => setVersion((v) => v + 1)}
            onOpen={(id) => {
              setAssistantId(id);
              setThreadId(undefined);
              setTab("Graph");
            }}
          />
        )}
        {tab === "Store" && <StoreTab server={server} />}
        {tab === "Crons" && <CronsTab server={server} assistants={assistants ?? []} />}
      </div>
    </section>
  );
}

/** Whether the assistant's state holds `messages` (its graph then has a chat mode too). */
function useHasMessages(server: AgentServer, assistantId: string | undefined) {
  const [chatty, setChatty] = useState(false);
  useEffect(() => {
    if (!assistantId) return;
    let live = true;
    server.schemas(assistantId).then(
      (s) =>
        live &&
        setChatty(
          Object.hasOwn((s.state_schema as { properties?: object } | null)?.properties ?? {}, "messages"),
        ),
      () => live && setChatty(false),
    );
    return () => {
      live = false;
    };
  }, [server, assistantId]);
  return chatty;
}

function TabList({ tabs, tab, onTab }: { tabs: Tab[]; tab: Tab; onTab: (t: Tab) => void }) {
  return (
    <div role="tablist" aria-label="Studio views" className="studio-tabs">
      {tabs.map((t) => (
        <button
          key={t}
          type="button"
          role="tab"
          id={`studio-tab-${t}`}
          aria-selected={tab === t}
          aria-controls="studio-panel"
          onClick={() => onTab(t)}
        >
          {t}
        </button>
      ))}
    </div>
  );
}
