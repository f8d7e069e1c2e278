import { dirname, join, resolve } from 'node:path';

export interface ConfigLocation {
  configDir: string;
  /** Defaults to the `jobs` folder beside the config folder. */
  jobsDir?: string;
}

/** `--config`, else $CONNECT2ERP_CONFIG, else ./config; `--jobs`, else $CONNECT2ERP_JOBS, else the jobs folder beside it. */
export function configLocation(options: { config?: string; jobs?: string }): Required<ConfigLocation> {
  const configDir = resolve(options.config ?? process.env.CONNECT2ERP_CONFIG ?? 'config');
  const jobsDir = resolve(options.jobs ?? process.env.CONNECT2ERP_JOBS ?? join(dirname(configDir), 'jobs'));
  return { configDir, jobsDir };
}
