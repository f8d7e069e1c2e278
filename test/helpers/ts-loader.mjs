// `node --import` of this file: the TypeScript sources run through ts-hooks.mjs.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
