/** The clock a run reads when no test moves one on: the machine's. */
export const systemClock = (): Date => new Date();
