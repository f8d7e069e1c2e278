/** The exit codes of every command (README, "Exit codes"). */
export const EXIT = { ok: 0, documentsFailed: 1, configuration: 2, interrupted: 3, unavailable: 4 } as const;

/** What each exit code means, for the usage text and the HTML report. */
export const EXIT_MEANING: Record<number, string> = {
  [EXIT.ok]: 'success',
  [EXIT.documentsFailed]: 'some documents failed',
  [EXIT.configuration]: 'configuration error',
  [EXIT.interrupted]: 'interrupted',
  [EXIT.unavailable]: 'an ERP system unavailable',
};
