/**
 * What an audio or video container says about itself (codec, duration, tags), through
 * music-metadata. Embedded cover images are skipped: only the facts are wanted.
 */
import { parseFile, type IAudioMetadata } from 'music-metadata';

export type ContainerMetadata = IAudioMetadata;

export function readContainerMetadata(path: string): Promise<ContainerMetadata> {
  return parseFile(path, { duration: true, skipCovers: true });
}
