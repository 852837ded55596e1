// The live page's searches (a leaderboard each, and the metric against every numeric searched
// hyperparameter) and benchmarks (every point, and throughput against what varies: batch size,
// threads, ranks, with the scaling efficiency).
'use strict';

// Whether `section` must be drawn again: its tables, their sort or the focused run changed.
// A run that trains changes the folder every 2 s; the searches and benchmarks drawn stay as
// they are (with the user's zoom) until their own data changes.
function sectionChanged(section, tables, sortKeys) {
  const sorts = sortKeys.map((k) => state.sorts[k] || { column: '', descending: false });
  const key = JSON.stringify([tables, sorts, state.focus]);
  if (state.drawn[section] === key) return false;
  state.drawn[section] = key;
  for (const graph of state.tableCharts[section] || []) graph.destroy();
  state.tableCharts[section] = [];
  return true;
}

// Dots of one series at the same x (trials that share a value) would be one row, one mark:
// each after the first moves a little along x (1% of the axis, in log space on a log axis),
// so that every trial keeps its own dot.
function spreadTies(series, log, lo, hi) {
  const span = log ? Math.log(hi / lo) : hi - lo;
  const step = 0.01 * (span > 0 ? span : (log ? Math.log(2) : Math.abs(lo) || 1));
  return series.map((s) => {
    const seen = new Map();
    const points = s.points.map(([x, y]) => {
      const k = seen.get(x) || 0;
      seen.set(x, k + 1);
      return [k === 0 ? x : (log ? x * Math.exp(step * k) : x + step * k), y];
    });
    return { ...s, points };
  });
}

// A chart card of `series` ({label, points, colour}) against x; dots only when `dots`; `extra`:
// dygraphs options of the chart's own (per-series ones).
function tableChart(section, title, xName, yName, series, dots, extra = {}) {
  const plot = el('div', { class: 'plot' }), legend = el('div', { class: 'legend' });
  const node = el('div', { class: 'chart', data: { title } }, plot, legend);
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const positive = xs.length && xs.every((x) => x > 0);
  const lo = Math.min(...xs), hi = Math.max(...xs);
  // a base-2 quantity (batch size, ranks, a learning rate over decades) on a log axis
  const log = positive && hi / lo >= 4;
  if (dots) series = spreadTies(series, log, lo, hi);
  const options = {
    labels: [xName, ...series.map((s) => s.label)], colors: series.map((s) => s.colour),
    title: htmlText(title), xlabel: htmlText(xName), ylabel: htmlText(yName), drawPoints: true,
    pointSize: dots ? 3 : 2,
    strokeWidth: dots ? 0 : 1.5, connectSeparatedPoints: !dots, legend: 'always',
    labelsDiv: legend, labelsSeparateLines: true, animatedZooms: false, width: 540, height: 300,
    xRangePad: 12, yRangePad: 12,  // dots at the ends drawn whole
    // labels wide enough for 3.00e-3 on one line
    axes: { x: { logscale: log, axisLabelWidth: 80 }, y: { axisLabelWidth: 80 } },
  };
  Object.assign(options, extra);
  if (log) {
    // dygraphs pads a log axis in linear units, below zero for values over decades (the axis
    // then drew nothing): the padding made in log space instead
    const spread = series.flatMap((s) => s.points.map((p) => p[0]));
    const low = Math.min(...spread), high = Math.max(...spread), pad = Math.pow(high / low, 0.05);
    options.xRangePad = 0;
    options.dateWindow = [low / pad, high * pad];  // the x axis's range
  }
  const rows = mergedRows(series);
  node.dataset.rows = rows.length;
  node.dataset.points = series.reduce((n, s) => n + s.points.length, 0);
  if (rows.length) {
    const graph = new Dygraph(plot, rows, options);
    node.dataset.xLow = graph.xAxisRange()[0];
    state.tableCharts[section].push(graph);
  }
  return node;
}

// Optimization history, as Optuna's dashboard draws it: each trial's metric by trial number (a
// dot), and the best so far (a line); the leaderboard, best first, says which way is better.
function historyChart(board) {
  const trial = board.columns.indexOf('trial'), metric = board.columns.indexOf(board.metric);
  const rows = board.rows.filter((r) => typeof r[trial] === 'number' && typeof r[metric] === 'number');
  if (rows.length < 2) return null;
  const best = rows[0][metric];  // the leaderboard's first: the best
  const minimize = rows.every((r) => r[metric] >= best);
  const points = rows.map((r) => [r[trial], r[metric]]).sort((a, b) => a[0] - b[0]);
  let sofar = null;
  const bestSoFar = points.map(([x, y]) => {
    sofar = sofar === null ? y : (minimize ? Math.min(sofar, y) : Math.max(sofar, y));
    return [x, sofar];
  });
  return tableChart('searches', board.metric + ' by trial (optimization history)', 'trial',
                    board.metric, [{ label: 'trial', points, colour: kPalette[0] },
                                   { label: 'best so far', points: bestSoFar, colour: kPalette[1] }],
                    false, { series: { trial: { strokeWidth: 0, pointSize: 3 } },
                             stepPlot: false });
}

function followTrial(path) {
  if (!path) return;
  state.picked.add(path);
  focusRun(path);
}

function renderSearches() {
  const boards = tableOf('leaderboard');
  document.getElementById('searches-section').hidden = boards.length === 0;
  if (!sectionChanged('searches', boards, boards.map((_, b) => 'leaderboard' + b))) return;
  const holder = document.getElementById('searches');
  const parts = [];
  boards.forEach((board, b) => {
    const table = el('table');
    renderTable(table, board, { sortKey: 'leaderboard' + b, pathColumn: 'run', onRow: followTrial });
    parts.push(el('h3', {}, board.title || 'search'), el('div', { class: 'scroll' }, table));
    const metric = board.columns.indexOf(board.metric), rung = board.columns.indexOf('rung');
    const charts = [historyChart(board), intermediateChart(board), importanceChart(board)]
                       .filter((c) => c);
    for (const hparam of board.hparams) {
      const column = board.columns.indexOf(hparam);
      const byRung = new Map();
      for (const row of board.rows) {
        if (typeof row[column] !== 'number' || typeof row[metric] !== 'number') continue;
        const key = 'rung ' + cellText(row[rung]);
        if (!byRung.has(key)) byRung.set(key, []);
        byRung.get(key).push([row[column], row[metric]]);
      }
      if (!byRung.size) continue;
      const series = [...byRung.keys()].sort().map((label, i) =>
          ({ label, points: byRung.get(label), colour: kPalette[i % kPalette.length] }));
      charts.push(tableChart('searches', board.metric + ' against ' + hparam, hparam, board.metric,
                             series, true));
    }
    if (charts.length) parts.push(el('div', { class: 'scatter' }, ...charts));
    const parallel = parallelChart(board);
    if (parallel) parts.push(parallel);
  });
  holder.replaceChildren(...parts);
}

// One line per pivot row (its key cells), x from the "batch_size=8" column names.
// A starved point (its process got under half its threads' CPU time: its figure says little)
// is ringed in red on the charts of its own measure.
function pivotChart(table, points) {
  const keys = table.keys;
  const columns = table.columns.slice(keys);
  const xs = columns.map((c) => Number(c.slice(c.indexOf('=') + 1)));
  if (xs.some((x) => isNaN(x))) return null;
  const series = table.rows.map((row, r) => ({
    label: row.slice(0, keys).map(cellText).join(' '),
    colour: kPalette[r % kPalette.length],
    points: xs.map((x, i) => [x, row[keys + i]]).filter((p) => typeof p[1] === 'number'),
  }));
  const starved = points.columns.indexOf('starved'), x = points.columns.indexOf(table.x);
  const value = points.columns.indexOf(table.value);
  const marks = starved < 0 || x < 0 || value < 0 ? [] : points.rows
      .filter((r) => r[starved] === 'starved' && typeof r[x] === 'number' && typeof r[value] === 'number')
      .map((r) => [r[x], r[value]]);
  const extra = {};
  if (marks.length) {
    const label = 'starved (under half its threads\' CPU time)';
    series.push({ label, points: marks, colour: '#b00020' });
    extra.series = { [label]: { strokeWidth: 0, pointSize: 6 } };
  }
  const node = tableChart('benchmarks', table.value + ' against ' + table.x, table.x, table.value,
                          series, false, extra);
  node.dataset.starved = marks.length;
  return node;
}

function renderBenchmarks() {
  const points = tableOf('points')[0];
  document.getElementById('benchmarks-section').hidden = !points;
  const pivots = tableOf('pivot');
  if (!sectionChanged('benchmarks', [points, pivots], ['points', ...pivots.map((_, i) => 'pivot' + i)])) {
    return;
  }
  const holder = document.getElementById('benchmarks');
  if (!points) return holder.replaceChildren();
  const parts = [];
  const charts = tableOf('pivot').map((t) => pivotChart(t, points)).filter((c) => c);
  if (charts.length) parts.push(el('div', { class: 'scatter' }, ...charts));
  for (const [i, pivot] of tableOf('pivot').entries()) {
    const table = el('table');
    renderTable(table, pivot, { sortKey: 'pivot' + i });
    parts.push(el('h3', {}, pivot.title), el('div', { class: 'scroll' }, table));
  }
  const table = el('table');
  renderTable(table, points, { sortKey: 'points' });
  parts.push(el('h3', {}, points.title || 'benchmark points'), el('div', { class: 'scroll' }, table));
  holder.replaceChildren(...parts);
}
