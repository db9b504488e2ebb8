import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessage, AIMessageChunk, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { getWeather, ScriptedWeatherModel } from "./agent.js";

// The weather agent with a human in the loop: before get_weather runs, the graph stops with interrupt() and
// waits for a decision sent as `command: {resume: {action: "approve" | "edit" | "reject", city?}}`. Its model
// streams the answer word by word, so a `messages-tuple` stream shows it arriving token by token.

export interface ApprovalDecision {
  action: "approve" | "edit" | "reject";
  /** With `edit`: the city to ask about instead. */
  city?: string;
}

const TOKEN_DELAY_MS = 40;
// A timer without @types/node (the example has no dev dependencies): every JS runtime it deploys to has one.
declare function setTimeout(callback: () => void, ms: number): unknown;

/** The scripted model, streamed: a tool call in one chunk, an answer one word at a time. */
class StreamingWeatherModel extends ScriptedWeatherModel {
  async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const { generations } = await this._generate(messages);
    const whole = generations[0]!.message as AIMessage;
    const parts: AIMessageChunk[] = whole.tool_calls?.length
      ? [
          new AIMessageChunk({
            content: "",
            tool_call_chunks: whole.tool_calls.map((c, index) => ({
              id: c.id,
              name: c.name,
              args: JSON.stringify(c.args),
              index,
              type: "tool_call_chunk" as const,
            })),
          }),
        ]
      : (String(whole.content).match(/\S+\s*/g) ?? [""]).map((word) => new AIMessageChunk({ content: word }));
    for (const message of parts) {
      const chunk = new ChatGenerationChunk({ message, text: String(message.content) });
      yield chunk;
      await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk });
      if (parts.length > 1) await new Promise<void>((r) => setTimeout(() => r(), TOKEN_DELAY_MS));
    }
  }
}

const model = new StreamingWeatherModel({});

async function callModel(state: typeof MessagesAnnotation.State) {
  return { messages: [await model.invoke(state.messages)] };
}

function nextStep(state: typeof MessagesAnnotation.State) {
  const last = state.messages.at(-1);
  return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "approval" : END;
}

/** Stops for a person's decision on the pending get_weather call, then runs it, runs it edited, or not at all. */
function approval(state: typeof MessagesAnnotation.State) {
  const ask = state.messages.at(-1) as AIMessage;
  const call = ask.tool_calls![0]!;
  const decision = interrupt<unknown, ApprovalDecision>({
    question: `Run ${call.name}?`,
    tool_call: { name: call.name, args: call.args, id: call.id },
  });
  if (decision?.action === "reject")
    return new Command({
      goto: END,
      update: {
        messages: [
          new ToolMessage({ content: "Rejected by the user.", tool_call_id: call.id!, status: "error" }),
          new AIMessage("OK, I did not look up the weather."),
        ],
      },
    });
  if (decision?.action === "edit" && decision.city) {
    const edited = new AIMessage({
      id: ask.id,
      content: ask.content,
      tool_calls: [{ ...call, args: { ...call.args, city: decision.city } }],
    });
    return new Command({ goto: "tools", update: { messages: [edited] } });
  }
  return new Command({ goto: "tools" });
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", callModel)
  .addNode("approval", approval, { ends: ["tools", END] })
  .addNode("tools", new ToolNode([getWeather]))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", nextStep, ["approval", END])
  .addEdge("tools", "agent")
  .compile();
