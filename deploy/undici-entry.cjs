// undici as the image's bundle carries it: the dispatchers the program uses (Agent, ProxyAgent)
// and their request API, without the rest of undici's entry (fetch, WebSocket, cookies, caches,
// mock agents), which a run would otherwise load and compile at every start, and which reaches
// Node's own copy of undici too (BENCHMARKS.md, issue 39's seventh part). deploy/bundle.mjs puts this file in
// place of the package's entry; a clone's modules load undici whole, the same classes.
// undici 7 publishes no "exports" map: these are its files, at the version package-lock.json
// pins. The image test runs the bundle against the sandboxes, and test/deploy.test.ts checks that
// every name the program imports from undici is here and is undici's own.
'use strict';

const Dispatcher = require('undici/lib/dispatcher/dispatcher');
const api = require('undici/lib/api');

// As undici's index.js does: request, stream, pipeline, upgrade and connect on every dispatcher.
Object.assign(Dispatcher.prototype, api);

module.exports = {
  Agent: require('undici/lib/dispatcher/agent'),
  ProxyAgent: require('undici/lib/dispatcher/proxy-agent'),
};
