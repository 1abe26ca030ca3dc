// Load: the shape into a new TopologyIndex for the client node, timed, with the heap before and after.
import { performance } from 'node:perf_hooks';
import { TopologyIndex } from '../../src/core/topology/topology-index.js';
import { SEED, type Sizes, prng, buildShape } from './shape.js';
import { settledHeap } from './heap.js';

/** Builds the shape and loads it into a new index; the shape is dropped on return. */
export function loadIndex(z: Sizes, client: string, gc: () => void) {
  const shape = buildShape(z, prng(SEED));
  const heapInputs = settledHeap(gc);
  const index = new TopologyIndex(client);
  const tLoad = performance.now();
  for (const n of shape.nodes) index.setNode(n.name, n.labels);
  const tNodes = performance.now();
  for (const s of shape.services) index.setService(s.key, s.svc);
  const tServices = performance.now();
  for (const s of shape.services) index.setSlice(s.key, s.sliceName, s.slice);
  const tSlices = performance.now();
  const load = {
    totalMs: tSlices - tLoad,
    nodesMs: tNodes - tLoad,
    servicesMs: tServices - tNodes,
    slicesMs: tSlices - tServices,
    recomputed: index.recomputed,
  };
  const heapLoaded = settledHeap(gc);
  return { index, nodes: shape.nodes, mix: shape.mix, load, heapInputs, heapLoaded };
}
