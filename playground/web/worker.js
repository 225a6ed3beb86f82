// The engine's Web Worker: it loads retrysim compiled to WebAssembly and
// answers the page's calls ({id, method, arg}) with playground.Call's JSON.
// The page ends a run that takes too long by terminating this worker.
'use strict';
importScripts('wasm_exec.js');

const ready = (async () => {
  const go = new Go();
  // Bytes, not instantiateStreaming: a plain file server may serve .wasm
  // with another content type.
  const bytes = await (await fetch('retrysim.wasm')).arrayBuffer();
  const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
  go.run(instance); // main sets retrysimCall and waits
})();

onmessage = async (e) => {
  const { id, method, arg } = e.data;
  try {
    await ready;
    const t0 = performance.now();
    const answer = JSON.parse(self.retrysimCall(method, JSON.stringify(arg)));
    postMessage({ id, answer, ms: performance.now() - t0 });
  } catch (err) {
    postMessage({ id, answer: { error: 'the engine failed to load or run: ' + err } });
  }
};
