// The live page's curves (every metric's train and validation series of the charted runs on
// one chart, a run's colour kept, validation dashed) and the focused run's facts.
'use strict';

// TensorBoard's smoothing: an exponential moving average, debiased at the start.
function smoothed(values, weight) {
  if (!(weight > 0)) return values;
  let average = 0, seen = 0;
  return values.map((v) => {
    if (v === null || !isFinite(v)) return v;
    average = weight * average + (1 - weight) * v;
    seen += 1;
    return average / (1 - Math.pow(weight, seen));
  });
}

// Each charted run's name in the legends: the hyperparameters whose values differ among the
// charted runs ("lr=0.1 batch_size=64"), with its name and file where they do not tell it
// apart from another (one run alone: its name and file).
function runLabels(paths) {
  const hparamsOf = (path) => (state.runs.get(path) || {}).hparams || {};
  const names = [...new Set(paths.flatMap((p) => Object.keys(hparamsOf(p))))].sort();
  const differing = names.filter((n) =>
    new Set(paths.map((p) => JSON.stringify(hparamsOf(p)[n]))).size > 1);
  const labels = new Map(paths.map((p) => [p, differing.filter((n) => n in hparamsOf(p))
    .map((n) => n + '=' + cellText(hparamsOf(p)[n])).join(' ')]));
  const values = [...labels.values()];
  if (values.some((v) => !v) || new Set(values).size < values.length) {
    for (const [path, label] of labels) {
      const run = state.runs.get(path) || {};
      labels.set(path, (label ? label + ' ' : '') + (run.name || '') + ' (' + path + ')');
    }
  }
  return labels;
}

// metric -> [{label, colour, dashed, points: [[x, y]...]}]: train, validation and test of a
// metric together; another split's series under "<split>.<metric>".
function collectCurves(xName, weight) {
  const curves = new Map();
  const labels = runLabels(chartedPaths().filter((p) => state.runs.has(p)));
  for (const path of chartedPaths()) {
    const run = state.runs.get(path);
    if (!run || !run.splits) continue;
    const splits = Object.keys(run.splits).sort((a, b) => {
      const [ia, ib] = [kSplitOrder.indexOf(a), kSplitOrder.indexOf(b)];
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
    });
    for (const split of splits) {
      const data = run.splits[split];
      const xs = data[xName] || data.step;
      for (const [metric, raw] of Object.entries(data.series)) {
        const key = kSplitOrder.includes(split) ? metric : split + '.' + metric;
        const values = smoothed(raw, weight);
        const points = [];
        values.forEach((v, i) => {
          if (v !== null && isFinite(v) && xs[i] !== null) points.push([xs[i], v]);
        });
        if (!curves.has(key)) curves.set(key, []);
        curves.get(key).push({ label: labels.get(path) + ' ' + split,
                               colour: colourOf(path), dashed: split !== 'train', points });
      }
    }
  }
  return curves;
}

// The series on one x: a row per distinct x, null where a series has no value there.
function mergedRows(series) {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const row = new Map(xs.map((x, i) => [x, i]));
  const rows = xs.map((x) => [x, ...series.map(() => null)]);
  series.forEach((s, k) => { for (const [x, y] of s.points) rows[row.get(x)][k + 1] = y; });
  return rows;
}

function curveOptions(metric, series, xName, legend) {
  const options = {
    labels: [xName, ...series.map((s) => s.label)],
    colors: series.map((s) => s.colour),
    series: {},
    title: htmlText(metric), xlabel: htmlText(xName), connectSeparatedPoints: true,
    drawPoints: true, pointSize: 1.5,
    logscale: document.getElementById('log-y').checked,
    legend: 'always', labelsDiv: legend, labelsSeparateLines: true, animatedZooms: false,
    width: 540, height: 300, xRangePad: 4, yRangePad: 8,
  };
  for (const s of series) {
    options.series[s.label] = { strokePattern: s.dashed ? Dygraph.DASHED_LINE : null };
  }
  return options;
}

function drawCurves() {
  if (state.folder) saveView();
  const xName = document.getElementById('x-axis').value;
  const weight = Number(document.getElementById('smoothing').value);
  const curves = collectCurves(xName, weight);
  const holder = document.getElementById('charts');
  for (const [metric, chart] of state.charts) {
    if (!curves.has(metric)) {
      chart.graph.destroy();
      chart.node.remove();
      state.charts.delete(metric);
    }
  }
  // the model's metrics first, then the loader's and other splits' series ("data.<name>")
  const order = (a, b) => a.includes('.') - b.includes('.') || a.localeCompare(b);
  for (const metric of [...curves.keys()].sort(order)) {
    const series = curves.get(metric).filter((s) => s.points.length);
    if (!series.length) continue;
    const rows = mergedRows(series);
    let chart = state.charts.get(metric);
    if (!chart) {
      const plot = el('div', { class: 'plot' }), legend = el('div', { class: 'legend' });
      const node = el('div', { class: 'chart', data: { metric } }, plot, legend);
      holder.append(node);
      chart = { node, legend, graph: new Dygraph(plot, rows, curveOptions(metric, series, xName, legend)) };
      state.charts.set(metric, chart);
    } else {
      chart.graph.updateOptions({ file: rows, ...curveOptions(metric, series, xName, chart.legend) });
    }
    chart.node.dataset.rows = rows.length;
    chart.node.dataset.last = cellText(series[0].points[series[0].points.length - 1][1]);
  }
  if (!curves.size) holder.replaceChildren(el('p', { class: 'hint' }, 'no curves yet'));
  else holder.querySelectorAll('p.hint').forEach((p) => p.remove());
}

function keyValueTable(title, entries) {
  const rows = entries.map(([k, v]) => el('tr', {}, el('td', {}, k),
      el('td', { class: typeof v === 'number' ? 'number' : '' }, cellText(v))));
  return el('div', {}, el('h3', {}, title), el('table', {}, ...rows));
}

function renderFacts() {
  const section = document.getElementById('run-section');
  const run = state.focus ? state.runs.get(state.focus) : null;
  section.hidden = !state.focus;
  if (!state.focus) return;
  document.getElementById('run-name').textContent = (run && run.name ? run.name + ': ' : '') + state.focus;
  const facts = document.getElementById('run-facts');
  if (!run) return facts.replaceChildren(el('p', { class: 'hint' }, 'reading...'));
  if (run.error) return facts.replaceChildren(el('p', { class: 'bad' }, run.error));
  const checkpoints = run.checkpoints.map((c) =>
      [c.path + (c.path === run.latest_checkpoint ? ' (latest)' : ''), c.step]);
  const attributes = Object.entries(run.attributes)
      .filter(([k]) => k !== 'status' && !k.endsWith('_metrics'));
  facts.replaceChildren(
      el('div', { class: 'facts' },
         keyValueTable('Facts', [['status', run.status + (run.held ? ' (being written)' : '')],
                                 ...attributes]),
         keyValueTable('Hyperparameters', Object.entries(run.hparams)),
         keyValueTable('Checkpoints (path, step)', checkpoints.length ? checkpoints
                                                                      : [['none kept', null]])),
      el('details', {}, el('summary', {}, 'script'), el('pre', {}, run.script || '')));
}
