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
const ZIP64_EXTRA_ID = 0x0001;
const MAX_COMMENT = 0xffff;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

export interface ZipSummary {
  entries: number;
  totalUncompressedBytes: number;
}

/** Thrown inside the walk; `inspectZip` turns it into a CORRUPT error worded for the caller's format. */
class NotAZip extends Error {}

function corrupt(reason: string): NotAZip {
  return new NotAZip(`ZIP: ${reason}`);
}

function bomb(reason: string): LoaderError {
  return new LoaderError('ZIP_BOMB', 'The file was refused: its compressed content expands to an unsafe size.', {
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
    return walkCentralDirectory(data);
  } catch (error) {
    if (error instanceof NotAZip) {
      throw new LoaderError('CORRUPT', `The ${label} could not be read: it is damaged or password-protected.`, { cause: error });
    }
    throw error;
  }
}

function walkCentralDirectory(data: Buffer): ZipSummary {
  if (data.length < EOCD_MIN_SIZE) throw corrupt('too short');
  const eocd = findEocd(data);
  if (eocd < 0) throw corrupt('no end of central directory');

  let declaredEntries = data.readUInt16LE(eocd + 10);
  let cdSize = data.readUInt32LE(eocd + 12);
  let cdOffset = data.readUInt32LE(eocd + 16);
  let cdEnd = eocd;

  const locator = eocd - ZIP64_LOCATOR_SIZE;
  if (locator >= 0 && data.readUInt32LE(locator) === ZIP64_LOCATOR_SIGNATURE) {
    const record = toSafeNumber(data.readBigUInt64LE(locator + 8), 'ZIP64 record offset');
    if (record + 56 > locator || data.readUInt32LE(record) !== ZIP64_EOCD_SIGNATURE) throw corrupt('bad ZIP64 record');
    declaredEntries = toSafeNumber(data.readBigUInt64LE(record + 32), 'entry count');
    cdSize = toSafeNumber(data.readBigUInt64LE(record + 40), 'directory size');
    cdOffset = toSafeNumber(data.readBigUInt64LE(record + 48), 'directory offset');
    cdEnd = record;
  }

  if (declaredEntries > ZIP_MAX_ENTRIES) throw bomb(`${declaredEntries} entries declared`);
  if (cdSize > cdEnd) throw corrupt('directory larger than file');
  // Archives with bytes prepended (self-extractors, some generators) keep offsets relative to
  // the original start; the directory then sits right before its end record.
  if (cdOffset + cdSize !== cdEnd) cdOffset = cdEnd - cdSize;

  let entries = 0;
  let total = 0;
  let at = cdOffset;
  while (at < cdOffset + cdSize) {
    if (at + CENTRAL_HEADER_SIZE > cdEnd || data.readUInt32LE(at) !== CENTRAL_HEADER_SIGNATURE) {
      throw corrupt('bad central directory header');
    }
    let compressed = data.readUInt32LE(at + 20);
    let uncompressed = data.readUInt32LE(at + 24);
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const extraStart = at + CENTRAL_HEADER_SIZE + nameLength;
    const next = extraStart + extraLength + commentLength;
    if (next > cdEnd) throw corrupt('central directory header overruns');

    if (uncompressed === U32_MAX || compressed === U32_MAX) {
      const sizes = readZip64Sizes(data, extraStart, extraStart + extraLength, uncompressed === U32_MAX, compressed === U32_MAX);
      if (sizes.uncompressed !== undefined) uncompressed = sizes.uncompressed;
      if (sizes.compressed !== undefined) compressed = sizes.compressed;
    }

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
  return { entries, totalUncompressedBytes: total };
}

function readZip64Sizes(
  data: Buffer,
  start: number,
  end: number,
  wantUncompressed: boolean,
  wantCompressed: boolean,
): { uncompressed?: number; compressed?: number } {
  let at = start;
  while (at + 4 <= end) {
    const id = data.readUInt16LE(at);
    const size = data.readUInt16LE(at + 2);
    const body = at + 4;
    if (body + size > end) break;
    if (id === ZIP64_EXTRA_ID) {
      // Only the fields saturated in the fixed header are present, always in this order.
      let field = body;
      const out: { uncompressed?: number; compressed?: number } = {};
      if (wantUncompressed) {
        if (field + 8 > body + size) throw corrupt('short ZIP64 field');
        out.uncompressed = toSafeNumber(data.readBigUInt64LE(field), 'entry size');
        field += 8;
      }
      if (wantCompressed) {
        if (field + 8 > body + size) throw corrupt('short ZIP64 field');
        out.compressed = toSafeNumber(data.readBigUInt64LE(field), 'entry size');
      }
      return out;
    }
    at = body + size;
  }
  throw corrupt('missing ZIP64 sizes');
}
