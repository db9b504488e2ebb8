import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";

// A weather agent that needs no API key: a scripted chat model asks for the get_weather tool, the ToolNode
// runs it, and the model answers with the tool's result. Swap ScriptedWeatherModel for a real chat model
// (e.g. new ChatOpenAI().bindTools([getWeather])) and the graph stays the same.

export const getWeather = tool(async ({ city }: { city: string }) => `It is 21°C and sunny in ${city}.`, {
  name: "get_weather",
  description: "The current weather in a city.",
  schema: {
    type: "object",
    properties: { city: { type: "string", description: "The city's name" } },
    required: ["city"],
  },
});

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/** "weather in Paris?" → "Paris" */
function cityOf(question: string): string {
  const m = /\bin\s+([\p{L}][\p{L} .'-]*)/u.exec(question);
  return m ? m[1]!.replace(/[\s.]+$/, "") : "Paris";
}

/** Deterministic: a tool call for the user's question first, then a final answer quoting the tool's result. */
export class ScriptedWeatherModel extends BaseChatModel {
  _llmType() {
    return "scripted-weather";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    const message = ToolMessage.isInstance(last)
      ? new AIMessage(`Here is the weather: ${textOf(last)}`)
      : new AIMessage({
          content: "",
          tool_calls: [
            {
              id: `call_${messages.length}`,
              name: "get_weather",
              args: { city: cityOf(textOf(last)) },
              type: "tool_call",
            },
          ],
        });
    return { generations: [{ message, text: textOf(message) }] };
  }
}

const model = new ScriptedWeatherModel({});

async function callModel(state: typeof MessagesAnnotation.State) {
  return { messages: [await model.invoke(state.messages)] };
}

function nextStep(state: typeof MessagesAnnotation.State) {
  const last = state.messages.at(-1);
  return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", callModel)
  .addNode("tools", new ToolNode([getWeather]))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", nextStep, ["tools", END])
  .addEdge("tools", "agent")
  .compile();
