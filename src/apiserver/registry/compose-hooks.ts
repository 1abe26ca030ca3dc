// Several kinds' registry hooks as one: each runs in order; when a later beforeCreate or beforeUpdate
// throws, the undos of the earlier ones run (last first) before the error propagates.
import type { RegistryHooks } from './types.js';

type Undo = () => Promise<void>;

async function runAll(steps: readonly (() => Promise<Undo | void>)[]): Promise<Undo | undefined> {
  const undos: Undo[] = [];
  const undoAll = async (): Promise<void> => {
    for (const u of [...undos].reverse()) await u();
  };
  try {
    for (const step of steps) {
      const undo = await step();
      if (undo !== undefined) undos.push(undo);
    }
  } catch (err) {
    await undoAll();
    throw err;
  }
  return undos.length === 0 ? undefined : undoAll;
}

export function composeHooks(list: readonly RegistryHooks[]): RegistryHooks {
  if (list.length === 1) return list[0]!;
  return {
    prepare: (r, obj, old) => list.forEach((h) => h.prepare?.(r, obj, old)),
    beforeCreate: (r, obj, ctx) => runAll(list.map((h) => async () => h.beforeCreate?.(r, obj, ctx))),
    beforeUpdate: (r, obj, old, ctx) =>
      runAll(list.map((h) => async () => h.beforeUpdate?.(r, obj, old, ctx))),
    afterUpdate: async (r, obj, old) => {
      for (const h of list) await h.afterUpdate?.(r, obj, old);
    },
    afterDelete: async (r, obj) => {
      for (const h of list) await h.afterDelete?.(r, obj);
    },
  };
}
