/**
 * The PGlite calls Keel makes, declared here rather than taken from PGlite's own typings: those need
 * DOM and Emscripten declarations that a Node program compiled with `skipLibCheck: false` lacks, and
 * the store's declarations are part of the worker entry's. A PGlite instance satisfies it.
 */
export interface EmbeddedPglite {
  readonly closed: boolean;
  close(): Promise<void>;
  query<T>(query: string, params?: unknown[]): Promise<{ rows: T[]; affectedRows?: number }>;
  exec(query: string): Promise<unknown[]>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  isInTransaction(): boolean;
  execProtocolRaw(message: Uint8Array): Promise<Uint8Array>;
  execProtocolRawStream(message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }): Promise<void>;
  /** The data folder as a tarball, to open another instance from (tests start hundreds of stores from one). */
  dumpDataDir(compression?: 'none' | 'gzip' | 'auto'): Promise<Blob>;
}
