// Compressed JSON for a watch cache that must be small rather than fast (the wrapper, whose memory a
// node's DaemonSet limit bounds). Objects of one resource share most of their text (field names, kinds,
// common values), so each is deflated against a dictionary: the first object of that resource packed.
// A 1 KiB Service packs to about 90 bytes, a slice to about 60 (alone, deflate gives about half).
// Packed forms are latin1 strings: one byte a character inside V8's heap, with no Buffer per object.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Turns JSON into a compact form and back: unpack(pack(s)) === s for any string that is well-formed
 * UTF-16 (as JSON.stringify's output always is; a lone surrogate would come back as U+FFFD).
 */
export interface JsonPacker {
  pack(json: string): string;
  unpack(packed: string): string;
}

// A 4 KiB window covers a typical object and its dictionary; a larger object still packs, with less
// of the dictionary in reach. memLevel 4 keeps deflate's state small for objects this size.
// Output in 1 KiB chunks rather than zlib's 16 KiB: a packed object is about 100 bytes, and a large
// chunk per call, freed at once, left the C heap fragmented and larger (11 MiB at 10,000 Services).
const OPTIONS = { windowBits: 12, memLevel: 4, chunkSize: 1024 } as const;
const WINDOW_BYTES = 2 ** OPTIONS.windowBits;

function ownCopy(b: Uint8Array): Buffer {
  const out = Buffer.allocUnsafeSlow(b.length);
  out.set(b);
  return out;
}

export class DictionaryPacker implements JsonPacker {
  private dictionary: Buffer | undefined;

  pack(json: string): string {
    const bytes = Buffer.from(json, 'utf8');
    // Set once and kept: every packed form needs it to unpack. zlib reads only a window's worth of it
    // (the last 4 KiB), and the copy is a buffer of its own, not a slice of Node's shared pool.
    this.dictionary ??= ownCopy(bytes.subarray(-WINDOW_BYTES));
    return deflateRawSync(bytes, { ...OPTIONS, dictionary: this.dictionary }).toString('latin1');
  }

  unpack(packed: string): string {
    return inflateRawSync(Buffer.from(packed, 'latin1'), {
      windowBits: OPTIONS.windowBits,
      chunkSize: 4096,
      dictionary: this.dictionary!,
    }).toString('utf8');
  }
}
