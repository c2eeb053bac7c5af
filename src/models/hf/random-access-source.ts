/**
 * A file read by ranges: safetensors checkpoints run to gigabytes, so the loader reads a header,
 * then one tensor at a time, and never holds a whole file. Implementations here are the ones the
 * browser can run (bytes in memory, a Blob or File the user picked, a cached download); the Node
 * one (fs.open + read) lives with the CLI, in src/cli/file-source.ts, so node:fs stays out of the
 * browser bundle.
 */

export interface RandomAccessSource {
  /** What the source is, for messages: a file name or a URL. */
  readonly name: string;
  /** Bytes in the source. */
  readonly size: number;
  /** Exactly `length` bytes from `offset`; rejects when the range passes the end. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Refuses a range outside [0, size]: every implementation checks the same way. */
export function checkReadRange(source: RandomAccessSource, offset: number, length: number): void {
  if (
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length) ||
    offset < 0 ||
    length < 0 ||
    offset + length > source.size
  ) {
    throw new RangeError(
      `${source.name}: cannot read ${length} bytes at ${offset} of a ${source.size}-byte file`,
    );
  }
}

/** Bytes already in memory (tests, small files). Reads are views, not copies. */
export function bytesSource(bytes: Uint8Array, name = 'bytes'): RandomAccessSource {
  const source: RandomAccessSource = {
    name,
    size: bytes.length,
    read(offset, length) {
      checkReadRange(source, offset, length);
      return Promise.resolve(bytes.subarray(offset, offset + length));
    },
  };
  return source;
}

/** A Blob or File (a picked file, a dropped folder's file, a cached Response's blob). */
export function blobSource(
  blob: Blob,
  name = blob instanceof File ? blob.name : 'blob',
): RandomAccessSource {
  const source: RandomAccessSource = {
    name,
    size: blob.size,
    async read(offset, length) {
      checkReadRange(source, offset, length);
      // slice() is lazy: only the range's bytes are read from disk.
      return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    },
  };
  return source;
}
