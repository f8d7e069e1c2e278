import { readFileSync } from 'node:fs';
import { registerSecret } from '../log.js';
import type { ConfigProblem } from '../../common/errors.js';

const REFERENCE = /\$\{(env|file):([^}]+)\}/g;

/**
 * Replace `${env:NAME}` and `${file:/path}` inside every string of a parsed YAML tree,
 * so that secrets never need to be written as literals. Every value read this way is
 * registered with the logger for masking. Problems are collected, not thrown.
 */
export function resolveReferences(
  tree: unknown,
  file: string,
  problems: ConfigProblem[],
  path: string[] = [],
): unknown {
  if (typeof tree === 'string') return resolveString(tree, file, problems, path);
  if (Array.isArray(tree)) return tree.map((item, i) => resolveReferences(item, file, problems, [...path, String(i)]));
  if (tree !== null && typeof tree === 'object') {
    return Object.fromEntries(
      Object.entries(tree).map(([key, value]) => [key, resolveReferences(value, file, problems, [...path, key])]),
    );
  }
  return tree;
}

/**
 * `${NAME}` or a whole `$NAME` naming a variable the environment has: the shell's way, which a YAML
 * file does not follow, so the variable would never be read. Only such a name is said back, never
 * the value, which may be a literal password that merely looks like one.
 */
const SHELL_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|^\$([A-Za-z_][A-Za-z0-9_]*)$/;

function resolveString(text: string, file: string, problems: ConfigProblem[], path: string[]): string {
  const shell = SHELL_REFERENCE.exec(text);
  const name = shell?.[1] ?? shell?.[2];
  if (name !== undefined && process.env[name] !== undefined)
    problems.push({
      file,
      path: path.join('.'),
      message: `refers to the environment variable ${name} the shell's way, which is not read: write \${env:${name}}`,
    });
  return text.replace(REFERENCE, (_whole, kind: string, name: string) => {
    const value = kind === 'env' ? process.env[name] : readSecretFile(name);
    if (value === undefined) {
      const what = kind === 'env' ? `environment variable ${name} is not set` : `cannot read file ${name}`;
      problems.push({ file, path: path.join('.'), message: what });
      return '';
    }
    registerSecret(value);
    return value;
  });
}

function readSecretFile(path: string): string | undefined {
  try {
    // Mounted secrets usually end with a newline that is not part of the secret.
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch {
    return undefined;
  }
}
