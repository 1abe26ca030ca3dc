import { runStoreConformance } from '../testing/conformance.js';
import { MemoryStore } from './memory-store.js';

runStoreConformance('memory', { open: async () => new MemoryStore() });
