// A search's views beside its leaderboard, as Optuna's dashboard has them: each trial's
// intermediate values (the curve ASHA judged), parallel coordinates of the hyperparameters and
// the metric, and the hyperparameters' importance (fANOVA, computed by the engine). Every name
// reaches the page as text (textContent, SVG text nodes), never as markup.
'use strict';

const kSvg = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const node = document.createElementNS(kSvg, tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Each trial's searched metric at every step it was measured, a line per trial in its run's
// colour; a trial ASHA stopped ends at its rung.
function intermediateChart(board) {
  const trials = board.intermediate || [];
  // one value a trial (a search without rungs, validated once) is the history chart's
  if (!trials.some((t) => t.points.length > 1)) return null;
  const trialColumn = board.columns.indexOf('trial'), runColumn = board.columns.indexOf('run');
  const runOf = new Map(board.rows.map((r) => [r[trialColumn], r[runColumn]]));
  const series = trials.map((t, i) => {
    const run = runOf.get(t.trial);
    return { label: 'trial ' + t.trial, points: t.points,
             colour: run ? colourOf(run) : kPalette[i % kPalette.length] };
  });
  return tableChart('searches', board.metric + ' by step, each trial (intermediate values)', 'step',
                    board.metric, series, false,
                    { legend: trials.length > 8 ? 'onmouseover' : 'always',
                      highlightSeriesOpts: { strokeWidth: 3 } });
}

// How a column's values map onto an axis from 0 (bottom) to 1 (top): numbers linearly, or on a
// log scale over a range of 4x or more (as the dot charts); words evenly, in sorted order.
function axisOf(name, values) {
  const numeric = values.every((v) => typeof v === 'number');
  if (!numeric) {
    const words = [...new Set(values.map(cellText))].sort();
    const at = (v) => (words.length > 1 ? words.indexOf(cellText(v)) / (words.length - 1) : 0.5);
    return { name, at, ticks: words.map((w) => [at(w), w]) };
  }
  const lo = Math.min(...values), hi = Math.max(...values);
  const log = lo > 0 && hi / lo >= 4;
  const scale = (v) => (log ? Math.log(v) : v);
  const at = (v) => (hi > lo ? (scale(v) - scale(lo)) / (scale(hi) - scale(lo)) : 0.5);
  const ticks = hi > lo ? [[0, lo], [1, hi]] : [[0.5, lo]];
  return { name, at, log, ticks: ticks.map(([p, v]) => [p, numberText(v)]) };
}

function numberText(v) {
  return Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(2)
                                                               : String(Number(v.toPrecision(4)));
}

// Parallel coordinates: an axis per searched hyperparameter and one for the metric, a line per
// trial coloured by its metric (dark: best). With ASHA, the trials of the highest rung reached
// (an earlier rung's metric is measured after less training).
function parallelChart(board) {
  const metric = board.columns.indexOf(board.metric), rung = board.columns.indexOf('rung');
  const trialColumn = board.columns.indexOf('trial'), runColumn = board.columns.indexOf('run');
  let rows = board.rows.filter((r) => typeof r[metric] === 'number');
  const top = Math.max(...rows.map((r) => (typeof r[rung] === 'number' ? r[rung] : 0)));
  rows = rows.filter((r) => (typeof r[rung] === 'number' ? r[rung] : 0) === top);
  if (rows.length < 2 || !board.hparams.length) return null;
  const columns = [...board.hparams, board.metric].map((name) => board.columns.indexOf(name));
  const axes = columns.map((c) => axisOf(board.columns[c], rows.map((r) => r[c])));
  const width = Math.max(720, 150 * axes.length), height = 320;
  const left = 70, right = 90, above = 36, below = 24;
  const x = (i) => left + (i * (width - left - right)) / (axes.length - 1);
  const y = (p) => above + (1 - p) * (height - above - below);
  const plot = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'parallel' });
  // the leaderboard is best first: rank 0 darkest, drawn last so that it is on top
  const shade = (rank) => {
    const t = rows.length > 1 ? rank / (rows.length - 1) : 0;
    const mix = (a, b) => Math.round(a + (b - a) * t);
    return `rgb(${mix(31, 242)}, ${mix(58, 193)}, ${mix(147, 78)})`;
  };
  rows.map((row, rank) => [row, rank]).reverse().forEach(([row, rank]) => {
    const points = columns.map((c, i) => `${x(i).toFixed(1)},${y(axes[i].at(row[c])).toFixed(1)}`);
    const line = svg('polyline', { points: points.join(' '), fill: 'none', stroke: shade(rank),
                                   'stroke-width': rank === 0 ? 2.5 : 1.5, class: 'trial' });
    line.dataset.trial = row[trialColumn];
    const facts = columns.map((c) => board.columns[c] + '=' + cellText(row[c])).join(', ');
    line.append(svg('title', {}, 'trial ' + cellText(row[trialColumn]) + ': ' + facts));
    if (runColumn >= 0 && row[runColumn]) {
      line.addEventListener('click', () => followTrial(row[runColumn]));
    }
    plot.append(line);
  });
  axes.forEach((axis, i) => {
    plot.append(svg('line', { x1: x(i), x2: x(i), y1: y(0), y2: y(1), class: 'axis' }));
    plot.append(svg('text', { x: x(i), y: 14, 'text-anchor': 'middle', class: 'axis-name' },
                    axis.name + (axis.log ? ' (log)' : '')));
    for (const [p, label] of axis.ticks) {
      plot.append(svg('text', { x: x(i) + 4, y: y(p) + (p > 0.9 ? -3 : p < 0.1 ? 12 : 4),
                                class: 'tick' }, label));
    }
  });
  const title = 'parallel coordinates: ' + rows.length + ' trials' +
                (top > 0 ? ' at rung ' + top : '') + ', darker is better';
  const node = el('div', { class: 'chart wide', data: { title, lines: rows.length } },
                  el('div', { class: 'chart-title' }, title));
  node.append(plot);
  return node;
}

// The hyperparameters' importance, largest first, as bars of their share.
function importanceChart(board) {
  const table = board.importance;
  if (!table) return null;
  const node = el('div', { class: 'chart importance', data: { title: table.title } },
                  el('div', { class: 'chart-title' }, table.title));
  for (const [name, share] of table.rows) {
    const bar = el('span', { class: 'bar' });
    bar.style.width = (100 * share).toFixed(1) + '%';
    node.append(el('div', { class: 'importance-row', data: { name } },
                   el('span', { class: 'name' }, name), el('span', { class: 'track' }, bar),
                   el('span', { class: 'share' }, share.toFixed(3))));
  }
  return node;
}
