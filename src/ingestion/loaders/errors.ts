export type LoaderErrorCode = 'UNSUPPORTED_TYPE' | 'CORRUPT' | 'ZIP_BOMB' | 'TOO_LARGE' | 'TIMEOUT' | 'EMPTY';

/**
 * An expected failure to read a document. `message` is shown to the person who uploaded the
 * file, so it names the problem in their terms; the technical reason, when there is one, is
 * kept in `cause` for logs.
 */
export class LoaderError extends Error {
  constructor(
    readonly code: LoaderErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'LoaderError';
  }
}

