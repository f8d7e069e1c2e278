import leven from 'leven';

/**
 * `" (did you mean X?)"` for a word mistyped from one of `known` (within two edits: `--dryrun`,
 * `erpBarcode:barcodee`), else empty: one rule for every name a person types (options, properties).
 */
export function didYouMean(given: string, known: readonly string[], shown = (name: string): string => name): string {
  const near = known.find((name) => leven(name, given) <= 2);
  return near === undefined ? '' : ` (did you mean ${shown(near)}?)`;
}
