/**
 * Picks the object storage the configuration names. Apart from the interface (storage.ts), so
 * the implementations import the interface without the interface importing them back.
 */
import type { Config } from '../config.ts';
import { GcsStorage } from './gcs-storage.ts';
import { LocalStorage } from './local-storage.ts';
import type { ObjectStorage } from './storage.ts';

export function createStorage(config: Config): ObjectStorage {
  const storage = config.storage;
  if (storage.kind === 'gcs') {
    return new GcsStorage({
      bucket: storage.bucket,
      apiEndpoint: storage.apiEndpoint,
      projectId: storage.projectId,
    });
  }
  return new LocalStorage({
    dir: storage.dir,
    publicUrl: config.publicUrl,
    dataDir: config.dataDir,
  });
}
