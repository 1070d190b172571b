/**
 * ZIP archives of hundreds of MB inflated, built in a second: JSZip deflates in JavaScript
 * (minutes for a gigabyte), Node's zlib natively. Entries with the same content share one
 * deflate. `declare` lets an entry state other sizes than its real ones, as a lying bomb does.
 */
import zlib from 'node:zlib';

export interface ZipEntryInput {
  name: string;
  data: Buffer;
  /** Uncompressed size written to both headers instead of the real one. */
  declare?: number;
}

export function writeZip(entries: ZipEntryInput[]): Buffer {
  const deflated = new Map<Buffer, { body: Buffer; crc: number }>();
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    let packed = deflated.get(entry.data);
    if (!packed) {
      packed = { body: zlib.deflateRawSync(entry.data, { level: 9 }), crc: zlib.crc32(entry.data) };
      deflated.set(entry.data, packed);
    }
    const name = Buffer.from(entry.name, 'utf8');
    const size = entry.declare ?? entry.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(packed.crc, 14);
    local.writeUInt32LE(packed.body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(8, 10);
    header.writeUInt32LE(packed.crc, 16);
    header.writeUInt32LE(packed.body.length, 20);
    header.writeUInt32LE(size, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    locals.push(local, name, packed.body);
    central.push(header, name);
    offset += local.length + name.length + packed.body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
