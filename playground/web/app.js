// The playground page: controls made from the engine's list of scenarios
// and their sweep parameters, the state in the URL's fragment, and runs on
// a Web Worker (worker.js). What it shows is what 'retrysim compare'
// prints for the command it shows.
'use strict';

const $ = (id) => document.getElementById(id);

// state is the page's request; the URL's fragment holds it:
// #s=NAME&seed=N&seeds=K&p=NAME=VALUE&vs=POLICY&format=F&plots=1&yaml=BASE64URL.
const state = { yaml: '', s: '', seed: '', seeds: 1, p: {}, vs: '', format: '', plots: false };
let catalogue = null; // the engine's list of the current file's scenarios

// --- the worker

let worker = null;
let progress = 0; // of the run in flight, 0 to 1
let pending = new Map(); // call id -> resolve
let nextId = 1;

function startWorker() {
  try {
    worker = new Worker('worker.js');
  } catch (e) {
    setStatus('error', 'cannot start the engine\'s Web Worker (' + e.message + '); a page opened from file:// cannot: serve its folder with a file server');
    throw e;
  }
  worker.onmessage = (e) => {
    if (e.data.progress !== undefined) { // of the run in flight
      progress = e.data.progress;
      return;
    }
    const resolve = pending.get(e.data.id);
    pending.delete(e.data.id);
    if (resolve) resolve(e.data);
  };
  worker.onerror = (e) => setStatus('error', 'the engine failed: ' + (e.message || e));
}

function call(method, arg) {
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    worker.postMessage({ id, method, arg });
  });
}

// cancel ends the runs in flight: the worker is terminated and a fresh one
// loads the engine again.
function cancel() {
  worker.terminate();
  const waiting = pending;
  pending = new Map();
  waiting.forEach((resolve) => resolve({ cancelled: true }));
  startWorker();
}

// --- the URL

function toBase64URL(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  bytes.forEach((b) => { bin += String.fromCharCode(b); });
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64URL(s) {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

function readURL() {
  const q = new URLSearchParams(location.hash.slice(1));
  state.s = q.get('s') || '';
  state.seed = q.get('seed') || '';
  state.seeds = Math.max(1, parseInt(q.get('seeds') || '1', 10) || 1);
  state.vs = q.get('vs') || '';
  state.format = q.get('format') || '';
  state.plots = q.get('plots') === '1';
  state.p = {};
  for (const p of q.getAll('p')) {
    const i = p.indexOf('=');
    if (i > 0) state.p[p.slice(0, i)] = p.slice(i + 1);
  }
  state.yaml = '';
  if (q.get('yaml')) {
    try { state.yaml = fromBase64URL(q.get('yaml')); } catch (e) { setStatus('error', 'the URL\'s yaml= is not base64url'); }
  }
}

function writeURL() {
  const q = new URLSearchParams();
  if (state.yaml) q.set('yaml', toBase64URL(state.yaml));
  if (state.s) q.set('s', state.s);
  if (state.seed) q.set('seed', state.seed);
  if (state.seeds > 1) q.set('seeds', String(state.seeds));
  for (const name of paramOrder()) q.append('p', name + '=' + state.p[name]);
  if (state.vs) q.set('vs', state.vs);
  if (state.format) q.set('format', state.format);
  if (state.plots) q.set('plots', '1');
  history.replaceState(null, '', '#' + q.toString());
}

// --- the request

function current() {
  return catalogue && catalogue.scenarios.find((s) => s.name === (state.s || catalogue.default));
}

// paramOrder is the set parameters in the registry's order (the controls').
function paramOrder() {
  const sc = current();
  const names = sc ? sc.controls.map((c) => c.name) : [];
  return names.filter((n) => state.p[n] !== undefined && state.p[n] !== '');
}

function request() {
  const r = {};
  if (state.yaml) r.yaml = state.yaml;
  if (state.s) r.scenario = state.s;
  if (state.seed) r.seed = state.seed;
  if (state.seeds > 1) r.seeds = state.seeds;
  const params = paramOrder().map((n) => n + '=' + state.p[n]);
  if (params.length) r.params = params;
  if (state.vs) r.vs = state.vs;
  if (state.format) r.format = state.format;
  if (state.plots) r.plots = true;
  return r;
}

// --- the controls

function setStatus(kind, text) {
  $('status').dataset.state = kind;
  $('status').textContent = text;
}

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

function renderScenarios() {
  const sel = $('scenario');
  sel.replaceChildren(...catalogue.scenarios.map((s) => option(s.name, s.name + (s.name === catalogue.default ? ' (default)' : ''))));
  if (!current()) state.s = '';
  sel.value = state.s || catalogue.default;
  renderScenario();
}

function renderScenario() {
  const sc = current();
  $('description').textContent = sc ? sc.description : '';
  $('vs').replaceChildren(option('', 'the default reference'), ...(sc ? sc.policies : []).map((p) => option(p, p)));
  $('vs').value = state.vs;
  const box = $('controls');
  box.replaceChildren();
  for (const c of sc ? sc.controls : []) {
    const label = document.createElement('label');
    const title = document.createElement('span');
    title.textContent = c.title + (c.unit === 'duration' ? ' (e.g. 500ms, 5s)' : '');
    // A count of 0 or 1 (shared_throttle) is a switch: a choice, not a field.
    const onOff = c.unit === 'count' && c.min === '0' && c.max === '1';
    const input = document.createElement(onOff ? 'select' : 'input');
    input.id = 'param-' + c.name;
    input.name = c.name;
    input.title = c.about + ' (' + c.min + ' to ' + c.max + ')';
    if (onOff) {
      input.append(option('', 'as in the file'), option('0', '0: off'), option('1', '1: on'));
    } else {
      input.placeholder = 'as in the file';
      if (c.unit === 'count') {
        input.type = 'number';
        input.min = c.min;
        input.max = c.max;
      }
    }
    input.value = state.p[c.name] || '';
    input.addEventListener(onOff ? 'change' : 'input', () => {
      state.p[c.name] = input.value.trim();
      changed();
    });
    label.append(title, input);
    box.append(label);
  }
  $('seed').value = state.seed;
  $('seeds').value = String(state.seeds);
  $('format').value = state.format;
  $('plots').checked = state.plots;
  $('source').value = state.yaml ? 'yaml' : 'builtin';
  $('yaml-box').classList.toggle('hidden', !state.yaml);
  $('edit-copy').classList.toggle('hidden', !!state.yaml);
}

// loadFile lists the scenarios of the current file (state.yaml, or the
// built-in one) and runs.
async function loadFile() {
  const a = await call('list', state.yaml ? { yaml: state.yaml } : {});
  if (a.cancelled) return;
  if (a.answer.error) {
    setStatus('error', a.answer.error);
    return;
  }
  catalogue = a.answer;
  renderScenarios();
  changed(true);
}

// --- the runs

let timer = null;    // the debounce of changes
let running = 0;     // the id of the run in flight, or 0
let runSeq = 0;

function changed(now) {
  writeURL();
  clearTimeout(timer);
  timer = setTimeout(runNow, now ? 0 : 150);
}

async function runNow() {
  if (running) cancel(); // a newer request replaces it
  const id = ++runSeq;
  running = id;
  const r = request();
  const t0 = performance.now();
  progress = 0;
  setStatus('running', 'running…');
  $('cancel').classList.remove('hidden');
  const tick = setInterval(() => {
    if (running === id) {
      setStatus('running', 'running… ' + Math.floor(progress * 100) + '% of the work estimate\'s bound, ' +
        ((performance.now() - t0) / 1000).toFixed(1) + ' s (Cancel stops it)');
    }
  }, 250);
  const a = await call('run', r);
  clearInterval(tick);
  if (running !== id) return; // replaced
  running = 0;
  $('cancel').classList.add('hidden');
  if (a.cancelled) {
    setStatus('error', 'cancelled');
    return;
  }
  if (a.answer.error) {
    $('output').textContent = '';
    $('warnings').textContent = '';
    $('command').textContent = '';
    showFigures({});
    setStatus('error', a.answer.error);
    return;
  }
  $('output').textContent = a.answer.output;
  $('warnings').textContent = (a.answer.warnings || []).map((w) => 'retrysim: warning: ' + w).join('\n');
  $('command').textContent = a.answer.command;
  showFigures(a.answer);
  setStatus('done', 'ran in ' + a.ms.toFixed(0) + ' ms in the browser; the command above prints the same' + (state.yaml ? ' (save the YAML as scenario.yaml)' : ''));
}

// figureURLs are the object URLs of the figures shown, freed when
// replaced. The SVG goes into an <img>, where no script of it can run.
let figureURLs = [];

function showFigures(answer) {
  figureURLs.forEach((u) => URL.revokeObjectURL(u));
  figureURLs = [];
  const figs = answer.figures || [];
  $('plots-box').classList.toggle('hidden', figs.length === 0);
  $('plot-command').textContent = answer.plot_command || '';
  $('figures').replaceChildren(...figs.map((f) => {
    const url = URL.createObjectURL(new Blob([f.svg], { type: 'image/svg+xml' }));
    figureURLs.push(url);
    const fig = document.createElement('figure');
    const img = document.createElement('img');
    img.src = url;
    img.alt = f.caption;
    img.dataset.name = f.name;
    const cap = document.createElement('figcaption');
    cap.textContent = f.name + '.svg';
    fig.append(cap, img);
    return fig;
  }));
}

// --- copies

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    // Not a secure context (plain http off localhost): copy by selection.
    const t = document.createElement('textarea');
    t.value = text;
    document.body.append(t);
    t.select();
    document.execCommand('copy');
    t.remove();
  }
  setStatus($('status').dataset.state, 'copied the ' + what);
}

async function yamlOf() {
  if (state.yaml) return state.yaml;
  const a = await call('show', state.s || catalogue.default);
  return a.answer.yaml || '';
}

// --- wiring

$('scenario').addEventListener('change', () => {
  state.s = $('scenario').value;
  state.p = {};
  state.vs = '';
  renderScenario();
  changed(true);
});
$('seed').addEventListener('input', () => { state.seed = $('seed').value.trim(); changed(); });
$('seeds').addEventListener('input', () => { state.seeds = Math.max(1, parseInt($('seeds').value, 10) || 1); changed(); });
$('vs').addEventListener('change', () => { state.vs = $('vs').value; changed(true); });
$('format').addEventListener('change', () => { state.format = $('format').value; changed(true); });
$('plots').addEventListener('change', () => { state.plots = $('plots').checked; changed(true); });
$('source').addEventListener('change', async () => {
  if ($('source').value === 'yaml') {
    $('yaml').value = await yamlOf();
    $('yaml-box').classList.remove('hidden');
    $('edit-copy').classList.add('hidden');
  } else {
    state.yaml = '';
    state.s = '';
    state.p = {};
    await loadFile();
  }
});
$('edit-copy').addEventListener('click', async () => {
  $('source').value = 'yaml';
  $('source').dispatchEvent(new Event('change'));
});
$('use-yaml').addEventListener('click', async () => {
  state.yaml = $('yaml').value;
  await loadFile();
});
$('cancel').addEventListener('click', () => { cancel(); });
$('copy-yaml').addEventListener('click', async () => copy(await yamlOf(), 'YAML (save it as scenario.yaml for --file)'));
$('copy-command').addEventListener('click', () => copy($('command').textContent, 'command'));
$('copy-plot-command').addEventListener('click', () => copy($('plot-command').textContent, 'plot command'));
window.addEventListener('hashchange', () => {
  const before = JSON.stringify(request());
  readURL();
  if (JSON.stringify(request()) !== before) loadFile();
});

startWorker();
readURL();
if (state.yaml) $('yaml').value = state.yaml;
loadFile();
