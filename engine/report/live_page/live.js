// The live page of `engine report --serve` (docs/results.md): it reads /api/folder every two
// seconds (the run files flush every two), and /api/run for each charted run; it draws with
// dygraphs. Every text from the files goes in as text, never as markup.
'use strict';

const kPalette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                  '#7f7f7f', '#bcbd22', '#17becf'];
const kDefaultCharted = 5;
const kSplitOrder = ['train', 'validation', 'test'];

const state = {
  folderText: '', folder: null, runs: new Map(), runTexts: new Map(),
  picked: new Set(), focus: null, compare: false,
  sorts: { runs: { column: 'started', descending: true } },
  charts: new Map(), colours: new Map(), tableCharts: {}, drawn: {},
};
window.engineLive = state;  // for a look from the browser's console

// ---- small helpers -------------------------------------------------------------------------

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'class') node.className = value;
    else if (key === 'data') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// dygraphs writes a chart's title and axis labels into the page as HTML (its legend escapes
// series labels itself): a name from a file (a metric, a hyperparameter, a run) goes through
// here first, so that it shows as the text it is and never becomes an element.
function htmlText(text) {
  const entities = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  return String(text).replace(/[&<>"']/g, (c) => entities[c]);
}

function numberText(value) {
  if (Number.isInteger(value)) return String(value);
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e6) return String(Number(value.toPrecision(4)));
  return value.toPrecision(4);
}

function cellText(value) {
  if (value === null || value === undefined) return '';
  return typeof value === 'number' ? numberText(value) : String(value);
}

// A run keeps one colour wherever it appears, and the same one at every load of the page: the
// folder's runs take the palette's colours in the order they started (their path breaking
// ties), so that a run started later takes the next colour instead of shifting the others'.
function assignColours() {
  const rows = [];
  for (const role of ['runs', 'evaluations']) {
    for (const t of tableOf(role)) {
      const started = t.columns.indexOf('started'), run = t.columns.indexOf('run');
      for (const row of t.rows) rows.push([cellText(row[started]), row[run]]);
    }
  }
  rows.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : (a[0] < b[0] ? -1 : 1)));
  for (const [, path] of rows) colourOf(path);
}

function colourOf(path) {
  if (!state.colours.has(path)) state.colours.set(path, kPalette[state.colours.size % kPalette.length]);
  return state.colours.get(path);
}

async function fetchText(url) {
  const response = await fetch(url, { cache: 'no-store' });
  const body = await response.text();
  if (!response.ok) throw new Error(body.trim() || 'HTTP ' + response.status);
  return body;
}

function tableOf(role) {
  return state.folder ? state.folder.tables.filter((t) => t.role === role) : [];
}

// ---- tables --------------------------------------------------------------------------------

// "lr<0.1", "status=completed", or any text: every comma-separated term must hold for a row.
function rowFilter(text, columns) {
  const terms = text.split(',').map((t) => t.trim()).filter((t) => t.length);
  const tests = terms.map((term) => {
    const match = /^([^<>=!]+?)\s*(<=|>=|!=|=|<|>)\s*(.*)$/.exec(term);
    const column = match ? columns.indexOf(match[1].trim()) : -1;
    if (column < 0) {
      const needle = term.toLowerCase();
      return (row) => row.some((cell) => cellText(cell).toLowerCase().includes(needle));
    }
    const [op, wanted] = [match[2], match[3].trim()];
    return (row) => {
      const cell = row[column];
      const numeric = typeof cell === 'number' && wanted !== '' && !isNaN(Number(wanted));
      const [a, b] = numeric ? [cell, Number(wanted)] : [cellText(cell), wanted];
      switch (op) {
        case '=': return a === b;
        case '!=': return a !== b;
        case '<': return a < b;
        case '>': return a > b;
        case '<=': return a <= b;
        default: return a >= b;
      }
    };
  });
  return (row) => tests.every((t) => t(row));
}

function compareCells(a, b) {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

// A sortable table: `options.sortKey` names its sort state, `options.pick` adds a tick box
// column (by the row's `pathColumn`), `options.onRow` makes rows clickable.
function renderTable(node, table, options = {}) {
  const sort = options.sortKey ? (state.sorts[options.sortKey] ||= { column: '', descending: false })
                               : null;
  let rows = table.rows.slice();
  if (options.filter) rows = rows.filter(options.filter);
  const sortColumn = sort ? table.columns.indexOf(sort.column) : -1;
  if (sortColumn >= 0) {
    rows.sort((a, b) => compareCells(a[sortColumn], b[sortColumn]) * (sort.descending ? -1 : 1));
  }
  const pathColumn = options.pathColumn === undefined ? -1 : table.columns.indexOf(options.pathColumn);
  const head = el('tr');
  if (options.pick) head.append(el('th', { title: 'chart and compare' }, '\u2713'));
  table.columns.forEach((column) => {
    const th = el('th', {}, column);
    if (sort) {
      if (column === sort.column) th.className = sort.descending ? 'sorted-down' : 'sorted-up';
      th.addEventListener('click', () => {
        sort.descending = sort.column === column ? !sort.descending : false;
        sort.column = column;
        render();
      });
    }
    head.append(th);
  });
  const body = [head];
  for (const row of rows) {
    const path = pathColumn >= 0 ? row[pathColumn] : null;
    const tr = el('tr', path ? { data: { path } } : {});
    if (options.pick && path) {
      const box = el('input', { type: 'checkbox' });
      box.checked = state.picked.has(path);
      box.addEventListener('click', (event) => {
        event.stopPropagation();
        box.checked ? state.picked.add(path) : state.picked.delete(path);
        render();
        refreshRuns();
      });
      tr.append(el('td', {}, box));
    }
    row.forEach((cell, i) => {
      const classes = [typeof cell === 'number' ? 'number' : ''];
      if (table.columns[i] === 'status') classes.push('status-' + cellText(cell));
      if (table.columns[i] === 'starved' && cell === 'starved') classes.push('starved');
      tr.append(el('td', { class: classes.join(' ').trim() }, cellText(cell)));
    });
    if (options.onRow && path) {
      tr.classList.add('clickable');
      if (path === state.focus) tr.classList.add('focused');
      tr.addEventListener('click', () => options.onRow(path));
    }
    body.push(tr);
  }
  node.replaceChildren(...body);
  return rows.length;
}

// ---- the folder ----------------------------------------------------------------------------

function chartedPaths() {
  if (state.picked.size) return [...state.picked];
  const runs = tableOf('runs')[0];
  if (!runs) return [];
  const started = runs.columns.indexOf('started'), path = runs.columns.indexOf('run');
  return runs.rows.slice().sort((a, b) => compareCells(b[started], a[started]))
    .slice(0, kDefaultCharted).map((row) => row[path]);
}

function focusRun(path) {
  state.focus = path;
  render();
  refreshRuns();
}

function renderRuns() {
  const runs = tableOf('runs')[0];
  const node = document.getElementById('runs');
  if (!runs) {
    node.replaceChildren(el('tr', {}, el('td', {}, 'no training runs in this folder yet')));
    return;
  }
  const filterText = document.getElementById('filter').value;
  renderTable(node, runs, { sortKey: 'runs', pick: true, pathColumn: 'run', onRow: focusRun,
                            filter: rowFilter(filterText, runs.columns) });
  renderComparison(runs);
}

// The picked runs side by side: only the hyperparameters whose values differ among them.
function renderComparison(runs) {
  const node = document.getElementById('comparison');
  node.hidden = !state.compare;
  if (!state.compare) return;
  const path = runs.columns.indexOf('run');
  const rows = runs.rows.filter((row) => state.picked.has(row[path]));
  if (rows.length < 2) {
    node.replaceChildren(el('p', { class: 'hint' }, 'tick two runs or more to compare them'));
    return;
  }
  const differing = runs.hparams.filter((h) => {
    const i = runs.columns.indexOf(h);
    return new Set(rows.map((row) => cellText(row[i]))).size > 1;
  });
  const columns = ['run', 'name', 'status', ...differing, 'steps', ...runs.metrics];
  const indexes = columns.map((c) => runs.columns.indexOf(c));
  const table = { columns, rows: rows.map((row) => indexes.map((i) => row[i])) };
  const holder = el('table');
  renderTable(holder, table, { sortKey: 'comparison' });
  node.replaceChildren(el('h3', {}, 'Picked runs: ' +
      (differing.length ? 'they differ in ' + differing.join(', ') : 'the same hyperparameters')),
  el('div', { class: 'scroll' }, holder));
}

function renderFiles() {
  const files = state.folder.files;
  const table = { columns: ['path', 'kind', 'state', 'bytes'],
                  rows: files.map((f) => [f.path, f.kind, f.state, f.bytes]) };
  const node = document.getElementById('files');
  renderTable(node, table, { sortKey: 'files' });
  for (const tr of node.querySelectorAll('tr')) {
    const kind = tr.children[1] ? tr.children[1].textContent : '';
    const fileState = tr.children[2] ? tr.children[2].textContent : '';
    if (tr.children[2]) tr.children[2].classList.add('state');
    if (kind === 'unreadable') tr.classList.add('bad');
    if (fileState === 'being written') tr.classList.add('live');
  }
  const bad = files.filter((f) => f.kind === 'unreadable');
  const problems = document.getElementById('problems');
  problems.hidden = bad.length === 0 && state.folder.notes.length === 0;
  const items = bad.map((f) => el('li', {}, f.path + ': ' + f.state));
  for (const note of state.folder.notes) items.push(el('li', {}, note));
  problems.replaceChildren(
      el('strong', {}, bad.length ? bad.length + ' file(s) cannot be read (damaged or cut short)'
                                  : 'notes'),
      el('ul', {}, ...items));
}

function renderEvaluations() {
  const table = tableOf('evaluations')[0];
  document.getElementById('evaluations-section').hidden = !table;
  if (table) {
    renderTable(document.getElementById('evaluations'), table,
                { sortKey: 'evaluations', pathColumn: 'run', onRow: focusRun });
  }
}

// ---- the view in the URL -------------------------------------------------------------------

// What the page shows, in the URL's fragment (#view=...), so that the address opens the same
// view again: the picked and focused runs, the sorts, the filter, the comparison, and the
// curves' x axis, smoothing and log axis.
function saveView() {
  const view = {
    picked: [...state.picked], focus: state.focus, compare: state.compare, sorts: state.sorts,
    filter: document.getElementById('filter').value,
    x: document.getElementById('x-axis').value,
    smoothing: document.getElementById('smoothing').value,
    logY: document.getElementById('log-y').checked,
  };
  const hash = '#view=' + encodeURIComponent(JSON.stringify(view));
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

// The view a URL's fragment gives; a fragment that is not one is left alone.
function restoreView() {
  if (!location.hash.startsWith('#view=')) return;
  let view;
  try {
    view = JSON.parse(decodeURIComponent(location.hash.slice(6)));
  } catch (error) {
    return;
  }
  if (!view || typeof view !== 'object') return;
  if (Array.isArray(view.picked)) state.picked = new Set(view.picked.map(String));
  if (typeof view.focus === 'string') state.focus = view.focus;
  state.compare = view.compare === true;
  if (view.sorts && typeof view.sorts === 'object') Object.assign(state.sorts, view.sorts);
  if (typeof view.filter === 'string') document.getElementById('filter').value = view.filter;
  const x = document.getElementById('x-axis');
  if ([...x.options].some((o) => o.value === view.x)) x.value = view.x;
  const smoothing = document.getElementById('smoothing');
  if (view.smoothing !== undefined && isFinite(Number(view.smoothing))) {
    smoothing.value = String(view.smoothing);
    document.getElementById('smoothing-value').textContent = smoothing.value;
  }
  document.getElementById('log-y').checked = view.logY === true;
}

function render() {
  if (!state.folder) return;
  saveView();
  document.getElementById('folder').textContent = state.folder.folder;
  renderRuns();
  renderEvaluations();
  renderSearches();
  renderBenchmarks();
  renderFiles();
  renderFacts();
}

// ---- refreshing ----------------------------------------------------------------------------

function setStatus(text, down) {
  const node = document.getElementById('status');
  node.textContent = text;
  node.classList.toggle('down', !!down);
}

// The charted and focused runs, read again; the charts redrawn when one changed.
async function refreshRuns() {
  const wanted = new Set(chartedPaths());
  if (state.focus) wanted.add(state.focus);
  let changed = false;
  for (const path of wanted) {
    try {
      const text = await fetchText('/api/run?path=' + encodeURIComponent(path));
      if (state.runTexts.get(path) !== text) {
        state.runTexts.set(path, text);
        state.runs.set(path, JSON.parse(text));
        changed = true;
      }
    } catch (error) {
      state.runs.set(path, { path, error: error.message, splits: {} });
      state.runTexts.delete(path);
      changed = true;
    }
  }
  for (const path of [...state.runs.keys()]) {
    if (!wanted.has(path)) {
      state.runs.delete(path);
      state.runTexts.delete(path);
      changed = true;
    }
  }
  if (changed || state.charts.size === 0) drawCurves();
  renderFacts();
}

async function refresh() {
  try {
    const text = await fetchText('/api/folder');
    if (text !== state.folderText) {
      state.folderText = text;
      state.folder = JSON.parse(text);
      assignColours();
      render();
    }
    const runs = tableOf('runs')[0];
    setStatus('live: ' + (runs ? runs.rows.length : 0) + ' run(s), ' + state.folder.files.length +
              ' file(s); read at ' + new Date().toLocaleTimeString());
    await refreshRuns();
  } catch (error) {
    setStatus('cannot read the folder: ' + error.message + ' (trying again)', true);
  }
  setTimeout(refresh, 2000);
}

function setUp() {
  restoreView();
  document.getElementById('filter').addEventListener('input', () => {
    renderRuns();  // its table only
    saveView();
  });
  document.getElementById('compare').addEventListener('click', () => {
    state.compare = !state.compare;
    render();
  });
  document.getElementById('clear').addEventListener('click', () => {
    state.picked.clear();
    render();
    refreshRuns();
  });
  const smoothing = document.getElementById('smoothing');
  smoothing.addEventListener('input', () => {
    document.getElementById('smoothing-value').textContent = smoothing.value;
    drawCurves();
  });
  document.getElementById('log-y').addEventListener('change', drawCurves);
  document.getElementById('x-axis').addEventListener('change', drawCurves);
  refresh();
}

window.addEventListener('DOMContentLoaded', setUp);
