/**
 * Undoing compression, in one place: HTTP content codings (gzip, deflate, br) for the two
 * fetchers, and gzip files (a sitemap.xml.gz) with a cap on what they may inflate to.
 */
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/** The Content-Encoding values we can undo. */
export const CONTENT_CODINGS: readonly string[] = Object.freeze(['gzip', 'x-gzip', 'deflate', 'br']);

/**
 * A stream that undoes one content coding, or null for one we cannot. `firstByte`, when known,
 * tells zlib-wrapped deflate from raw deflate: servers send either under "deflate".
 */
export function contentDecoder(encoding: string, firstByte?: number): Transform | null {
  switch (encoding.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'deflate': {
      // A zlib header starts with CM=8 in the low nibble and a window size <= 7 in the high one.
      const zlibWrapped = firstByte === undefined || ((firstByte & 0x0f) === 8 && firstByte >> 4 <= 7);
      return zlibWrapped ? zlib.createInflate() : zlib.createInflateRaw();
    }
    default:
      return null;
  }
}

/** A gzip file's content; throws (RangeError) past `maxBytes` inflated, so a bomb stays small. */
export function gunzipFile(data: Buffer, maxBytes: number): Buffer {
  return zlib.gunzipSync(data, { maxOutputLength: maxBytes });
}
