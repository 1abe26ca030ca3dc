// The node agents' V8 settings: memory over speed.
import { setFlagsFromString } from 'node:v8';

/**
 * Asks V8 to favour memory over speed in this process: the node agents (`svcplane wrapper`,
 * `svcplane proxy`) are judged by their memory (SuperEdge's DaemonSet allows the wrapper 100 Mi). Without
 * it V8 keeps the heap it grew to during the initial sync (the wrapper: committed 100–130 MiB for 81 MiB
 * live) and glibc keeps what that sync freed; with it, the wrapper benchmark's RSS went from 255–267 to
 * 174–177 MiB, for a relabel about 1 ms slower (docs/design/wrapper-performance.md); the proxy's, see
 * docs/benchmarks.md (proxy memory).
 * Node documents flags set after V8 has started as unsupported, and what V8 sizes at startup (the young
 * generation's limit, which the flag would set to 1 MiB on the command line) stays as it was; what it
 * decides as it runs (how far the heap grows, how hard it compacts) follows the flag. The benchmark
 * measures it on this Node (20): the same RSS as `node --optimize-for-size` within the noise. Set before
 * the agent allocates anything.
 *
 * The young generation is the exception: set at run time, --optimize-for-size lets it grow to 16 MiB
 * (32 by default), where the command-line flag would keep it at 1. A growth factor of 1 keeps it at the
 * size it has at this point (1 MiB): the peaks of the initial sync and of a cluster-wide change were
 * 10–15 MiB lower in the wrapper benchmark (112 against 96–100 MiB of anonymous memory), for more frequent
 * young-generation collections.
 */
export function favourMemory(): void {
  setFlagsFromString('--optimize-for-size');
  setFlagsFromString('--semi-space-growth-factor=1');
}
