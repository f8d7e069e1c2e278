// Loaded with `node --import` into a CLI whose files are limited by `ulimit -f`, the test's stand-in
// for a disk that fills: Node ignores SIGXFSZ, so a write past the limit fails (EFBIG) as it would
// with ENOSPC. A hook of tap's in the child (signal-exit) listens for SIGXFSZ and, being the only
// listener, would kill the process with it; this listener keeps the signal what Node makes it.
process.on('SIGXFSZ', () => undefined);
