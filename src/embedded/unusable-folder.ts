/**
 * A folder Keel keeps files in could not be made or written (a container's root-owned /app, a KEEL_HOME
 * that names a file): the error names the folder, what it is for and the way out, instead of a bare
 * `EACCES: permission denied, mkdir …`.
 */
export class UnusableFolderError extends Error {
  override readonly name = 'UnusableFolderError';
}

/** File-system codes that mean "this process cannot keep a folder there". */
const WHY: Readonly<Record<string, string>> = {
  EACCES: 'this process may not write there',
  EPERM: 'this process may not write there',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a file stands where a folder is needed',
  EEXIST: 'a file stands where a folder is needed',
};

/** An UnusableFolderError for `err` when it is one of those codes, else undefined (rethrow `err`). */
export function unusableFolderError(
  err: unknown,
  folder: { path: string; holds: string; fix: string },
): UnusableFolderError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why = typeof code === 'string' ? WHY[code] : undefined;
  if (!why) return undefined;
  return new UnusableFolderError(`cannot keep ${folder.holds} in ${folder.path} (${code}: ${why}); ${folder.fix}`, {
    cause: err,
  });
}
