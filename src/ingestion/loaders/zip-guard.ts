import { inflateRawSync } from 'node:zlib';
import { LoaderError } from './errors.ts';

/**
 * Limits checked against the ZIP central directory before any decompression. They are far
 * above what real Office files need (a 300-slide deck is ~1,000 entries and tens of MB) and
 * far below what would hurt a worker: the decompressed bytes of JSZip live outside the V8
 * heap, so the worker's heap limit alone would not stop a bomb.
 */
export const ZIP_MAX_ENTRIES = 10_000;
export const ZIP_MAX_TOTAL_UNCOMPRESSED_BYTES = 200 * 1024 * 1024;
export const ZIP_MAX_ENTRY_RATIO = 200;
/** The ratio rule only applies above this size: small XML parts legitimately compress 500:1. */
export const ZIP_RATIO_MIN_UNCOMPRESSED_BYTES = 10 * 1024 * 1024;

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_MIN_SIZE = 22;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_LOCATOR_SIZE = 20;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_HEADER_SIGNATURE = 0x02014b50;
const CENTRAL_HEADER_SIZE = 46;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_SIZE = 30;
const METHOD_STORED = 0;
const METHOD_DEFLATED = 8;
const ZIP64_EXTRA_ID = 0x0001;
const MAX_COMMENT = 0xffff;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

export interface ZipSummary {
  entries: number;
  totalUncompressedBytes: number;
}

interface ZipEntry {
  method: number;
  compressed: number;
  uncompressed: number;
  /** Of the local header, already corrected for bytes prepended to the archive. */
  localHeader: number;
}

/** Thrown inside the walk; `inspectZip` turns it into a CORRUPT error worded for the caller's format. */
class NotAZip extends Error {}

function corrupt(reason: string): NotAZip {
  return new NotAZip(`ZIP: ${reason}`);
}

function bomb(reason: string): LoaderError {
  return new LoaderError('ZIP_BOMB', 'The file was refused: its compressed contents would expand to an unsafe size or number of files.', {
    cause: new Error(`ZIP: ${reason}`),
  });
}

function findEocd(data: Buffer): number {
  const lowest = Math.max(0, data.length - EOCD_MIN_SIZE - MAX_COMMENT);
  for (let at = data.length - EOCD_MIN_SIZE; at >= lowest; at--) {
    // The comment length must reach exactly the end of the file; otherwise these four bytes
    // are just part of the comment or of compressed data.
    if (data.readUInt32LE(at) === EOCD_SIGNATURE && at + EOCD_MIN_SIZE + data.readUInt16LE(at + 20) === data.length) {
      return at;
    }
  }
  return -1;
}

/** For ZIP64 counts and sizes: beyond 2^53 is no real document. */
function toSafeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw bomb(`${what} is out of range`);
  return Number(value);
}

/**
 * Reads only the central directory (no decompression) and refuses archives whose declared
 * sizes are unsafe. Declared sizes can lie; a lie that understates them is caught later by
 * the parser's own size checks and by the worker's resource limits.
 * `label` names the format in the user-facing message ("Word document").
 */
export function inspectZip(data: Buffer, label = 'Office document'): ZipSummary {
  try {
    const entries = walkCentralDirectory(data);
    return { entries: entries.length, totalUncompressedBytes: entries.reduce((sum, e) => sum + e.uncompressed, 0) };
  } catch (error) {
    if (error instanceof NotAZip) {
      throw new LoaderError('CORRUPT', `The ${label} could not be read: it is damaged or password-protected.`, { cause: error });
    }
    throw error;
  }
}

function walkCentralDirectory(data: Buffer): ZipEntry[] {
  if (data.length < EOCD_MIN_SIZE) throw corrupt('too short');
  const eocd = findEocd(data);
  if (eocd < 0) throw corrupt('no end of central directory');

  let declaredEntries = data.readUInt16LE(eocd + 10);
  let cdSize = data.readUInt32LE(eocd + 12);
  let cdOffset = data.readUInt32LE(eocd + 16);
  let cdEnd = eocd;

  const locator = eocd - ZIP64_LOCATOR_SIZE;
  if (locator >= 0 && data.readUInt32LE(locator) === ZIP64_LOCATOR_SIGNATURE) {
    // Offsets past the buffer are merely wrong, so precision beyond 2^53 does not matter.
    const record = Number(data.readBigUInt64LE(locator + 8));
    if (record + 56 > locator || data.readUInt32LE(record) !== ZIP64_EOCD_SIGNATURE) throw corrupt('bad ZIP64 record');
    declaredEntries = toSafeNumber(data.readBigUInt64LE(record + 32), 'entry count');
    cdSize = Number(data.readBigUInt64LE(record + 40));
    cdOffset = Number(data.readBigUInt64LE(record + 48));
    cdEnd = record;
  }

  if (declaredEntries > ZIP_MAX_ENTRIES) throw bomb(`${declaredEntries} entries declared`);
  if (cdSize > cdEnd) throw corrupt('directory larger than file');
  // Archives with bytes prepended (self-extractors, some generators) keep offsets relative to
  // the original start; the directory then sits right before its end record.
  const shift = cdEnd - cdSize - cdOffset;
  cdOffset += shift;

  const list: ZipEntry[] = [];
  let entries = 0;
  let total = 0;
  let at = cdOffset;
  while (at < cdOffset + cdSize) {
    if (at + CENTRAL_HEADER_SIZE > cdEnd || data.readUInt32LE(at) !== CENTRAL_HEADER_SIGNATURE) {
      throw corrupt('bad central directory header');
    }
    const method = data.readUInt16LE(at + 10);
    let compressed = data.readUInt32LE(at + 20);
    let uncompressed = data.readUInt32LE(at + 24);
    let localHeader = data.readUInt32LE(at + 42);
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const extraStart = at + CENTRAL_HEADER_SIZE + nameLength;
    const next = extraStart + extraLength + commentLength;
    if (next > cdEnd) throw corrupt('central directory header overruns');

    if (uncompressed === U32_MAX || compressed === U32_MAX || localHeader === U32_MAX) {
      const wide = readZip64Fields(data, extraStart, extraStart + extraLength, [
        uncompressed === U32_MAX,
        compressed === U32_MAX,
        localHeader === U32_MAX,
      ]);
      uncompressed = wide[0] ?? uncompressed;
      compressed = wide[1] ?? compressed;
      localHeader = wide[2] ?? localHeader;
    }
    list.push({ method, compressed, uncompressed, localHeader: localHeader + shift });

    entries++;
    if (entries > ZIP_MAX_ENTRIES) throw bomb(`more than ${ZIP_MAX_ENTRIES} entries`);
    total += uncompressed;
    if (total > ZIP_MAX_TOTAL_UNCOMPRESSED_BYTES) throw bomb(`more than ${ZIP_MAX_TOTAL_UNCOMPRESSED_BYTES} bytes uncompressed`);
    if (uncompressed > ZIP_RATIO_MIN_UNCOMPRESSED_BYTES && uncompressed > compressed * ZIP_MAX_ENTRY_RATIO) {
      throw bomb(`entry expands ${uncompressed} bytes from ${compressed}`);
    }
    at = next;
  }
  // A directory that ends mid-record, or an entry count that disagrees with what we walked
  // (the 16-bit count saturates at 0xFFFF without ZIP64, hence the exception), is not a ZIP.
  if (at !== cdOffset + cdSize) throw corrupt('directory size mismatch');
  if (entries !== declaredEntries && declaredEntries !== U16_MAX) throw corrupt('entry count mismatch');
  if (entries === 0) throw corrupt('empty archive');
  return list;
}

/** The ZIP64 extra field holds, in this order, only the fields saturated in the fixed header. */
function readZip64Fields(data: Buffer, start: number, end: number, wanted: readonly boolean[]): (number | undefined)[] {
  for (let at = start; at + 4 <= end; ) {
    const id = data.readUInt16LE(at);
    const size = data.readUInt16LE(at + 2);
    const body = at + 4;
    if (body + size > end) break;
    if (id === ZIP64_EXTRA_ID) {
      let field = body;
      return wanted.map((want) => {
        if (!want) return undefined;
        if (field + 8 > body + size) throw corrupt('short ZIP64 field');
        const value = toSafeNumber(data.readBigUInt64LE(field), 'ZIP64 field');
        field += 8;
        return value;
      });
    }
    at = body + size;
  }
  throw corrupt('missing ZIP64 fields');
}

/**
 * Makes the declared sizes true, in the worker, before a parser unzips anything: inflates
 * every entry with Node's zlib, refusing output beyond the size its directory entry declares.
 * Without this, an archive that understates its sizes passes `inspectZip` and JSZip inflates
 * it in full (off the V8 heap, so no worker limit applies) before noticing the mismatch.
 * Costs one extra decompression, bounded by the limits `inspectZip` already enforced.
 */
export function verifyZip(data: Buffer): void {
  for (const entry of walkCentralDirectory(data)) {
    const at = entry.localHeader;
    if (at < 0 || at + LOCAL_HEADER_SIZE > data.length || data.readUInt32LE(at) !== LOCAL_HEADER_SIGNATURE) {
      throw corrupt('bad local header');
    }
    const start = at + LOCAL_HEADER_SIZE + data.readUInt16LE(at + 26) + data.readUInt16LE(at + 28);
    const end = start + entry.compressed;
    if (end > data.length) throw corrupt('entry data overruns');
    if (entry.method === METHOD_STORED) {
      if (entry.compressed !== entry.uncompressed) throw corrupt('stored entry size mismatch');
    } else if (entry.method === METHOD_DEFLATED) {
      let actual: number;
      try {
        // maxOutputLength must be at least 1; an empty entry is checked by the length below.
        actual = inflateRawSync(data.subarray(start, end), { maxOutputLength: Math.max(1, entry.uncompressed) }).length;
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          throw bomb(`entry expands beyond its declared ${entry.uncompressed} bytes`);
        }
        throw corrupt('bad deflate data');
      }
      if (actual !== entry.uncompressed) throw corrupt('deflated entry size mismatch');
    }
    // Other methods (Deflate64, encrypted entries) no parser here can read: they fail there,
    // without inflating anything.
  }
}
