import { ConfigError } from '../../common/errors.js';

const MAX_PODS = 256;

/**
 * How many runs of the connector go at once, each with every system's `maxConcurrentCalls`:
 * `validate --pods N`, else `CONNECT2ERP_PODS` (the migration Job sets it to its `parallelism`,
 * which Kubernetes does not pass on; empty is unset), else 1.
 */
export function podsOf(option: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const [file, path, text] =
    option === undefined
      ? ['environment', 'CONNECT2ERP_PODS', env.CONNECT2ERP_PODS]
      : ['command line', '--pods', option];
  if (text === undefined || text === '') return 1;
  const pods = /^\d+$/.test(text) ? Number(text) : 0;
  if (pods < 1 || pods > MAX_PODS)
    throw new ConfigError([
      { file, path, message: `"${text}" is not a number of pods running at once, 1 to ${MAX_PODS}` },
    ]);
  return pods;
}
