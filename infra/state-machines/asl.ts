// Reading an ASL definition's structure (the CDK app and the quota checks both need its Map states).

/** A state as the ASL has it: only the fields read here are typed. */
export interface AslState {
  Type: string;
  Next?: string;
  Default?: string;
  Choices?: { Next: string }[];
  Catch?: { Next: string }[];
  Retry?: { ErrorEquals: string[] | string; MaxAttempts?: number | string }[];
  ItemsPath?: string;
  MaxConcurrency?: number;
  MaxConcurrencyPath?: string;
  ItemProcessor?: AslStates & { ProcessorConfig?: { Mode?: string } };
  Iterator?: AslStates;
  Branches?: AslStates[];
}

export interface AslStates {
  StartAt: string;
  States: Record<string, AslState>;
}

export interface MapState {
  /** Names from the machine's top level down to the Map, "/"-joined. */
  path: string;
  state: AslState;
  processor: AslStates & { ProcessorConfig?: { Mode?: string } };
  distributed: boolean;
}

/** Every Map state of a definition, nested ones (in Map processors and Parallel branches) included. */
export function mapStates(def: AslStates, prefix = ""): MapState[] {
  const out: MapState[] = [];
  for (const [name, state] of Object.entries(def.States)) {
    const path = `${prefix}${name}`;
    const processor = state.ItemProcessor ?? state.Iterator;
    if (state.Type === "Map" && processor) {
      const distributed = (processor as MapState["processor"]).ProcessorConfig?.Mode === "DISTRIBUTED";
      out.push({ path, state, processor, distributed });
      out.push(...mapStates(processor, `${path}/`));
    }
    for (const [i, branch] of (state.Branches ?? []).entries())
      out.push(...mapStates(branch, `${path}[${i}]/`));
  }
  return out;
}
