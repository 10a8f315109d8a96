/* onnxperf report viewer: charts (Chart.js, inlined) and the paginated node table.
 * Data comes from the JSON blocks #report-data (the report model) and #report-view (colours).
 * Every model-provided string reaches the page through textContent or canvas text, never as HTML. */
(function () {
  'use strict';
  var t0 = performance.now();  // ms since navigation start
  var R = JSON.parse(document.getElementById('report-data').textContent);
  var V = JSON.parse(document.getElementById('report-view').textContent);
  var timings = { start_at_ms: t0, parsed_ms: performance.now() - t0, charts: {} };
  window.__onnxperf = { report: R, charts: {}, timings: timings };

  /* ---------- formatting (mirrors onnxperf/render/numbers.py) ---------- */
  function g3(x) { return Number(x.toPrecision(3)).toString(); }
  function si(x, unit) {
    unit = unit || '';
    if (x === null || x === undefined || !isFinite(x)) return '?';
    var ax = Math.abs(x), P = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < P.length; i++) if (ax >= P[i][0]) return g3(x / P[i][0]) + ' ' + P[i][1] + unit;
    return (Number.isInteger(x) ? String(x) : g3(x)) + (unit ? ' ' + unit : '');
  }
  function bytes(x) {
    if (x === null || x === undefined) return '?';
    var P = [[Math.pow(2, 40), 'TiB'], [Math.pow(2, 30), 'GiB'], [Math.pow(2, 20), 'MiB'], [1024, 'KiB']];
    for (var i = 0; i < P.length; i++) if (Math.abs(x) >= P[i][0]) return g3(x / P[i][0]) + ' ' + P[i][1];
    return x + ' B';
  }
  function secs(x) {
    if (x === null || x === undefined || !isFinite(x)) return '?';
    var P = [[1, 's'], [1e-3, 'ms'], [1e-6, '\u00b5s']];
    for (var i = 0; i < P.length; i++) if (Math.abs(x) >= P[i][0]) return g3(x / P[i][0]) + ' ' + P[i][1];
    return g3(x / 1e-9) + ' ns';
  }
  function pct(x) { return (x === null || x === undefined) ? '?' : (100 * x).toFixed(1) + '%'; }
  function int(x) { return (x === null || x === undefined) ? '?' : x.toLocaleString('en-US'); }
  function num(x) { return (x === null || x === undefined) ? '' : g3(x); }

  /* ---------- columns ---------- */
  var C = {};
  R.nodes.columns.forEach(function (c, i) { C[c] = i; });
  var rows = R.nodes.rows;
  var T = R.tensors.rows;  // [name, dtype, shape]
  var hasPred = !!R.roofline, hasMeas = !!R.measured;
  var OPS = V.op + '/s', OPB = V.op + '/B';
  function color(op) { return V.colors[op] || V.other; }
  function opLabel(r) { return r[C.domain] ? r[C.domain] + '::' + r[C.op_type] : r[C.op_type]; }
  function ops(r) { return r[C.flops] + r[C.int_ops]; }
  /* names longer than NAME_MAX are shown cut (a model's names can add up to megabytes: laid out in
     full they would stall the page); the whole name is one click away (nameText) */
  var NAME_MAX = 200;
  function shortName(text) {
    text = String(text);
    return text.length <= NAME_MAX ? text : text.slice(0, NAME_MAX) + '\u2026 (' + text.length.toLocaleString('en-US') + ' characters)';
  }
  function nodeTitle(r) { return '#' + r[C.key] + ' ' + (r[C.name] ? shortName(r[C.name]) : '(unnamed)'); }
  function shapes(list) {
    var out = [];
    for (var i = 0; i < list.length; i++) {
      var ti = list[i];
      out.push(ti === null ? '\u2014' : (T[ti][2] === null ? '?' : T[ti][2]));
    }
    return out.join(' ');
  }
  function numel(list) {
    var s = 0;
    for (var i = 0; i < list.length; i++) {
      var ti = list[i];
      if (ti === null || T[ti][2] === null) continue;
      var dims = T[ti][2].slice(1, -1), n = 1;
      if (!dims) { s += 1; continue; }
      var parts = dims.split(',');
      for (var j = 0; j < parts.length; j++) { var d = Number(parts[j]); if (!isFinite(d)) { n = -1; break; } n *= d; }
      if (n >= 0) s += n;
    }
    return s;
  }
  /* text with line-break opportunities after / . _ : (names like /layer1/layer1.0/conv1/Conv) */
  function breakable(node, text) {
    var parts = String(text).split(/([\/._:])/), cur = '';  // separators kept at odd indices
    for (var i = 0; i < parts.length; i++) {
      cur += parts[i];
      if (i % 2 === 1 || i === parts.length - 1) {
        if (node.firstChild) node.appendChild(document.createElement('wbr'));
        node.appendChild(document.createTextNode(cur));
        cur = '';
      }
    }
  }
  function nameText(node, text) {
    text = String(text);
    if (text.length <= NAME_MAX) { breakable(node, text); return; }
    breakable(node, text.slice(0, NAME_MAX) + '\u2026 ');
    var b = el('button', 'more', 'show all ' + text.length.toLocaleString('en-US') + ' characters');
    b.type = 'button';
    b.addEventListener('click', function (ev) { ev.stopPropagation(); node.textContent = ''; breakable(node, text); });
    node.appendChild(b);
  }
  function shapeCell(td, list) {
    for (var i = 0; i < list.length; i++) {
      var ti = list[i], s = el('span', null, ti === null ? '\u2014' : (T[ti][2] === null ? '?' : T[ti][2]));
      if (ti !== null) s.title = shortName(T[ti][0]) + ' ' + T[ti][1];
      td.appendChild(s);
      if (i < list.length - 1) td.appendChild(document.createTextNode(' '));
    }
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  /* ---------- Chart.js defaults ---------- */
  var charts = window.__onnxperf.charts;
  if (window.Chart) {
    Chart.defaults.animation = false;
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    Chart.defaults.font.size = 12;
    Chart.defaults.color = '#5b6478';
    Chart.defaults.maintainAspectRatio = false;
  }
  /* Tick labels on a log axis: at powers of ten, and at 2 and 5 too on an axis of under 2.5 decades
   * (it may hold no power of ten at all); every tick keeps its grid line. Where the decades are too
   * close for their labels (many decades on a phone), every 2nd (3rd...) decade is labelled. The
   * scale's auto-skip is off: it dropped the 2 and 5 labels of one chart and kept its twin's. */
  function logTicks(fmt) {
    return { maxRotation: 0, autoSkip: false, callback: function (v) {
      var e = Math.floor(Math.log10(v) + 1e-9), m = v / Math.pow(10, e), decades = Math.log10(this.max / this.min);
      if (Math.abs(m - 1) < 1e-6) {
        var room = this.isHorizontal() ? 48 : 20, len = (this.isHorizontal() ? this.width : this.height) || 300;
        var every = Math.max(1, Math.ceil(decades * room / len));
        return ((e % every) + every) % every === 0 ? fmt(v) : '';
      }
      return decades < 2.5 && (Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6) ? fmt(v) : '';
    } };
  }

  /* grid lines of a log axis: the decades' plain, the 2..9 between them faint */
  var LOG_GRID = { color: function (c) { return c.tick && c.tick.major ? 'rgba(0,0,0,.1)' : 'rgba(0,0,0,.04)'; } };

  /* ---------- axes that cover the data, at any width ---------- */
  /* A log axis over the data [lo, hi], padded on each side by 5% of its span in decades (0.1 decade at
   * least), so that no point sits on the plot's edge, half cut off; whole: then out to powers of ten.
   * The padding is ~4.5% of the plot whatever the span: 12 px on a phone, more than a point's radius. */
  function logRange(lo, hi, whole) {
    var a = Math.log10(lo), b = Math.log10(hi), pad = Math.max(0.1, 0.05 * (b - a));
    a -= pad; b += pad;
    if (whole) { a = Math.floor(a); b = Math.ceil(b); }
    return { min: Math.pow(10, a), max: Math.pow(10, b) };
  }
  /* A bytes axis from 0 at binary steps (256 KiB, 512 KiB, 768 KiB, 1 MiB...): render/report.py's
   * binary_axis (V.axes) gives its top and step; the scale's own ticks would be decimal (977 KiB). */
  function bytesAxis(ax, title) {
    var y = { type: 'linear', min: 0, title: { display: true, text: title }, ticks: { callback: function (v) { return bytes(v); } } };
    if (ax) {
      y.max = ax.max;
      y.afterBuildTicks = function (scale) {
        var t = [];
        for (var v = 0; v <= ax.max + ax.step / 2; v += ax.step) t.push({ value: v });
        scale.ticks = t;
      };
    }
    return y;
  }
  /* A chart box narrower than NARROW (a phone) puts a side legend under the plot: beside it, the
   * legend and the y axis would share half the width each and both be cut. */
  var NARROW = 640;
  function legendSide(cv, side) { return (cv.parentNode.clientWidth || NARROW) < NARROW ? 'bottom' : side; }
  function legendFollows(side) {
    return function (ch, size) {
      var pos = size.width < NARROW ? 'bottom' : side;
      if (ch.options.plugins.legend.position !== pos) ch.options.plugins.legend.position = pos;
    };
  }
  /* A category label cut to what half the chart's width holds (the tooltip has it whole). */
  function fitLabel(text, scale) {
    var max = Math.max(8, Math.floor(scale.chart.width * 0.45 / 7));
    text = String(text);
    if (text.length > max && text.indexOf('::') > 0) text = text.slice(text.lastIndexOf('::') + 2);  // the op type, without its domain
    return text.length <= max ? text : text.slice(0, max - 1) + '\u2026';
  }

  /* ---------- where the cost goes ---------- */
  function costChart() {
    var cv = document.getElementById('cost-chart');
    if (!cv || !window.Chart) return;
    var bars = R.cost_chart.bars;  /* ranked, named and summed by the report model (cost_chart) */
    var labels = bars.map(function (b) { return b.label; });
    function share(key) { return bars.map(function (b) { return 100 * b[key]; }); }
    cv.parentNode.style.height = Math.max(220, labels.length * (hasPred ? 34 : 26) + 90) + 'px';
    var ds = [
      { label: '% of FLOPs', data: share('flops_share'), backgroundColor: '#3b5bdb' },
      { label: '% of bytes moved', data: share('bytes_share'), backgroundColor: '#74c0fc' }
    ];
    if (hasPred) ds.push({ label: '% of predicted time', data: share('predicted_share'), backgroundColor: '#f08c00' });
    if (hasMeas) ds.push({ label: '% of measured time', data: share('measured_share'), backgroundColor: '#2f9e44' });
    charts.cost = new Chart(cv, {
      type: 'bar',
      data: { labels: labels, datasets: ds },
      options: {
        indexAxis: 'y',
        scales: { x: { min: 0, max: 100, title: { display: true, text: 'share of the model (%)' } },
                  y: { ticks: { autoSkip: false, callback: function (v) { return fitLabel(this.getLabelForValue(v), this); } } } },
        plugins: { legend: { position: 'top' },
                   tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + c.parsed.x.toFixed(1) + '%'; } } } }
      }
    });
  }

  /* ---------- roofline ---------- */
  var rooflineMode = 'predicted', overlap = 0;
  /* Points of one op type that fall on the same spot (within 1/200 of a decade on both log axes, below
   * a pixel) are drawn once, with a count: repeated layers give thousands of identical points. */
  function rooflineData(mode) {
    var col = mode === 'measured' ? C.measured_s : C.predicted_s;
    var byOp = {}, order = [], hidden = 0, uncosted = 0, inside = 0, seen = {};
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (String(r[C.key]).indexOf('/') >= 0) continue;  // subgraph bodies are inside their control-flow node
      /* predicted: the plan's point (run_intensity, attained_ops_per_s); measured: the node's own
       * intensity and its operations over the measured time */
      var pred = mode !== 'measured', tm = r[col], o = ops(r);
      var x = pred ? r[C.run_intensity] : r[C.intensity], y = pred ? r[C.attained_ops_per_s] : (tm > 0 ? o / tm : null);
      if (pred && tm === 0 && r[C.runs] === 'inside') { inside++; continue; }  // its kernel's point carries it
      if (tm === null || !(tm > 0) || !(o > 0) || x === null || !(x > 0) || y === null || !(y > 0)) {
        if (r[C.status] === 'counted' || r[C.status] === 'zero_by_design') hidden++; else uncosted++;  // no cost: unsupported, unknown shape, rule error
        continue;
      }
      var op = V.colors[r[C.op_type]] ? r[C.op_type] : '__other__';
      var spot = op + '|' + Math.round(Math.log10(x) * 200) + '|' + Math.round(Math.log10(y) * 200);
      if (seen[spot]) { seen[spot].n++; continue; }
      if (!byOp[op]) { byOp[op] = []; order.push(op); }
      byOp[op].push(seen[spot] = { x: x, y: y, i: i, n: 1 });
    }
    order.sort(function (a, b) { return (V.rank[a] === undefined ? 1e9 : V.rank[a]) - (V.rank[b] === undefined ? 1e9 : V.rank[b]); });
    return { byOp: byOp, order: order, hidden: hidden, uncosted: uncosted, inside: inside };
  }
  function rooflineChart() {
    var cv = document.getElementById('roofline-chart');
    if (!cv || !window.Chart || !R.hardware) return;
    var d = rooflineData(rooflineMode);
    var hw = R.hardware, bw = hw.memory_bandwidth_bytes_per_s;
    var xs = [], ys = [];
    d.order.forEach(function (op) { d.byOp[op].forEach(function (p) { xs.push(p.x); ys.push(p.y); }); });
    var peaks = hw.roofs.map(function (r) { return r.peak_ops_per_s; });
    var ridges = hw.roofs.map(function (r) { return r.ridge_ops_per_byte; });
    var xr = logRange(Math.min.apply(null, xs.concat(ridges).concat([1])), Math.max.apply(null, xs.concat(ridges).concat([1])), true);
    var xmin = xr.min, xmax = xr.max;
    var pmax = Math.max.apply(null, peaks);
    var yr = logRange(Math.min.apply(null, ys.concat([xmin * bw])), Math.max.apply(null, ys.concat([pmax])), true);
    var ymin = yr.min, ymax = yr.max;
    var datasets = [];
    var dash = [[], [6, 4], [2, 3], [8, 3, 2, 3]];
    hw.roofs.forEach(function (rf, k) {
      datasets.push({ type: 'line', label: rf.dtype + ' roof ' + si(rf.peak_ops_per_s, OPS),
        data: [{ x: xmin, y: xmin * bw }, { x: rf.ridge_ops_per_byte, y: rf.peak_ops_per_s }, { x: xmax, y: rf.peak_ops_per_s }],
        borderColor: '#1d2433', borderWidth: 1.5, borderDash: dash[k % dash.length], pointRadius: 0, pointHoverRadius: 0,
        fill: false, order: 0, isRoof: true });
    });
    (hw.level_roofs || []).forEach(function (lv) {  /* a cache level's bandwidth: the roof of the bytes it serves */
      datasets.push({ type: 'line', label: lv.level + ' bandwidth ' + si(lv.bandwidth_bytes_per_s, 'B/s'),
        data: [{ x: xmin, y: xmin * lv.bandwidth_bytes_per_s }, { x: pmax / lv.bandwidth_bytes_per_s, y: pmax }],
        borderColor: '#868e96', borderWidth: 1, borderDash: [4, 4], pointRadius: 0, pointHoverRadius: 0, fill: false,
        order: 0, isRoof: true });
    });
    hw.roofs.forEach(function (rf) {
      datasets.push({ type: 'line', label: 'ridge ' + g3(rf.ridge_ops_per_byte) + ' ' + OPB, data: [{ x: rf.ridge_ops_per_byte, y: ymin }, { x: rf.ridge_ops_per_byte, y: rf.peak_ops_per_s }],
        borderColor: '#adb5bd', borderWidth: 1, borderDash: [2, 3], pointRadius: 0, pointHoverRadius: 0, fill: false, order: 0, isRoof: true });
    });
    var many = xs.length > 5000;
    d.order.forEach(function (op) {
      var c = op === '__other__' ? V.other : color(op);
      datasets.push({ type: 'scatter', label: op === '__other__' ? 'other op types' : op, data: d.byOp[op],
        backgroundColor: c + (many ? '99' : 'cc'), borderColor: c, borderWidth: many ? 0 : 0.5,
        pointRadius: many ? 1.5 : 4, pointHoverRadius: 7, order: 1 });
    });
    var info = document.getElementById('roofline-hover');
    var opts = {
      parsing: false, normalized: true,
      scales: {
        x: { type: 'logarithmic', grid: LOG_GRID, min: xmin, max: xmax, title: { display: true, text: rooflineMode === 'measured' ? 'arithmetic intensity (' + V.op + ' per byte the node moves)' : 'arithmetic intensity as run (' + V.op + ' per byte the prediction charges)' }, ticks: logTicks(function (v) { return si(v); }) },
        y: { type: 'logarithmic', grid: LOG_GRID, min: ymin, max: ymax, title: { display: true, text: (rooflineMode === 'measured' ? 'achieved rate, ops / measured time' : 'attained rate, ops / predicted time') + ' (' + OPS + ')' }, ticks: logTicks(function (v) { return si(v, OPS); }) }
      },
      interaction: { mode: 'nearest', intersect: true },
      onResize: legendFollows('right'),
      plugins: {
        legend: { position: legendSide(cv, 'right'), labels: { boxWidth: 12, filter: function (l) { return !!l.text; } } },
        tooltip: {
          // overlapping points (identical nodes) show one entry and a count, not a wall of copies
          filter: function (c, k, all) { return !c.dataset.isRoof && k === all.findIndex(function (x) { return !x.dataset.isRoof; }); },
          callbacks: {
            title: function (items) { var r = rows[items[0].raw.i]; return nodeTitle(r); },
            footer: function () { return overlap > 1 ? '+' + (overlap - 1) + ' more node' + (overlap > 2 ? 's' : '') + ' at this point' : ''; },
            label: function (c) {
              var r = rows[c.raw.i], tm = r[rooflineMode === 'measured' ? C.measured_s : C.predicted_s];
              return [opLabel(r) + (r[C.bound] ? ' \u00b7 ' + r[C.bound] + '-bound' : ''),
                'intensity ' + g3(c.raw.x) + ' ' + OPB, 'rate ' + si(c.raw.y, OPS),
                rooflineMode + ' time ' + secs(tm)];
            }
          }
        }
      },
      onHover: function (e, els, chart) {
        var pt = null;
        overlap = 0;
        for (var k = 0; k < els.length; k++) { var ds = chart.data.datasets[els[k].datasetIndex]; if (!ds.isRoof) { overlap += ds.data[els[k].index].n; if (!pt) pt = ds.data[els[k].index]; } }
        if (!pt) return;
        var r = rows[pt.i];
        info.textContent = nodeTitle(r) + ' \u2014 ' + opLabel(r) + ', intensity ' + g3(pt.x) + ' ' + OPB + ', ' + si(pt.y, OPS) + ', ' +
          rooflineMode + ' ' + secs(r[rooflineMode === 'measured' ? C.measured_s : C.predicted_s]) + (r[C.bound] ? ', ' + r[C.bound] + '-bound' : '') +
          (overlap > 1 ? ' (+' + (overlap - 1) + ' more at this point)' : '');
        info.dataset.key = r[C.key];
      },
      onClick: function (e, els, chart) {
        for (var k = 0; k < els.length; k++) { var ds = chart.data.datasets[els[k].datasetIndex]; if (!ds.isRoof) { showNode(rows[ds.data[els[k].index].i][C.key]); return; } }
      }
    };
    if (charts.roofline) charts.roofline.destroy();
    charts.roofline = new Chart(cv, { type: 'scatter', data: { datasets: datasets }, options: opts });
    var note = document.getElementById('roofline-hidden');
    if (note) {
      var parts = [];
      if (d.hidden) parts.push(d.hidden === 1 ? '1 costed node is not drawn: it does no arithmetic or moves no bytes (log axes cannot show 0).'
        : int(d.hidden) + ' costed nodes are not drawn: they do no arithmetic or move no bytes (log axes cannot show 0).');
      if (d.inside) parts.push(d.inside === 1 ? '1 node runs inside another node\'s kernel: that node\'s point carries its time and bytes.'
        : int(d.inside) + ' nodes run inside another node\'s kernel: that node\'s point carries their time and bytes.');
      if (d.uncosted) parts.push(d.uncosted === 1 ? '1 node has no cost (unsupported op, unknown shape or rule error) and is not drawn.'
        : int(d.uncosted) + ' nodes have no cost (unsupported ops, unknown shapes or rule errors) and are not drawn.');
      note.textContent = parts.join(' ');
      note.dataset.zeroWork = d.hidden; note.dataset.uncosted = d.uncosted; note.dataset.inside = d.inside;
    }
  }

  /* ---------- memory over execution order ---------- */
  var mainRows = [];
  for (var mi = 0; mi < rows.length; mi++) if (String(rows[mi][C.key]).indexOf('/') < 0) mainRows.push(mi);
  function memoryChart() {
    var cv = document.getElementById('memory-chart');
    if (!cv || !window.Chart) return;
    var tl = R.memory.timeline_bytes, data = new Array(tl.length);
    for (var i = 0; i < tl.length; i++) data[i] = { x: i, y: tl[i] };
    var ps = R.memory.peak_step;
    var ds = [{ type: 'line', label: 'live activation bytes', data: data, borderColor: '#3b5bdb', backgroundColor: 'rgba(59,91,219,.12)',
      fill: true, borderWidth: 1.5, pointRadius: 0, pointHoverRadius: 3, tension: 0, order: 1 }];
    if (ps !== null && ps !== undefined) {
      ds.push({ type: 'scatter', label: 'peak ' + bytes(tl[ps]) + ' at step ' + ps, data: [{ x: ps, y: tl[ps] }],
        backgroundColor: '#e03131', borderColor: '#fff', borderWidth: 2, pointRadius: 7, pointHoverRadius: 8, order: 0 });
    }
    /* the peak's marker (radius 7) at the first or the last step would be half cut: room for it */
    var last = Math.max(tl.length - 1, 1), room = 0.03 * last;
    var xlo = ps !== null && ps !== undefined && ps < room ? -room : 0, xhi = ps !== null && ps !== undefined && ps > last - room ? last + room : last;
    charts.memory = new Chart(cv, {
      type: 'line', data: { datasets: ds },
      options: {
        parsing: false, normalized: true, spanGaps: true,
        scales: { x: { type: 'linear', min: xlo, max: xhi, ticks: { precision: 0 }, title: { display: true, text: 'execution step (node in topological order)' },
                       afterBuildTicks: function (scale) { scale.ticks = scale.ticks.filter(function (t) { return t.value >= 0 && t.value <= last && Number.isInteger(t.value); }); } },
                  y: bytesAxis(V.axes && V.axes.memory, 'live activation memory') },
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        plugins: {
          decimation: { enabled: tl.length > 4000, algorithm: 'min-max' },
          tooltip: { callbacks: {
            title: function (items) { var s = items[0].raw.x, r = rows[mainRows[s]]; return 'step ' + s + (r ? ': ' + nodeTitle(r) + ' (' + opLabel(r) + ')' : ''); },
            label: function (c) { return bytes(c.raw.y) + ' live'; } } }
        }
      }
    });
  }

  /* ---------- decoder LLM: tokens/s and memory against the context ---------- */
  function llmCharts() {
    var F = R.llm && R.llm.figures;
    if (!F || !F.curve || !window.Chart) return;
    var palette = ['#3b5bdb', '#e8590c', '#2b8a3e', '#862e9c'];
    var batches = [];
    F.curve.forEach(function (p) { if (batches.indexOf(p.batch) < 0) batches.push(p.batch); });
    function sets(key) {
      return batches.map(function (b, k) {
        return { label: 'batch ' + b, borderColor: palette[k % palette.length], backgroundColor: palette[k % palette.length],
          borderWidth: 2, pointRadius: 3, tension: 0,
          data: F.curve.filter(function (p) { return p.batch === b && p[key] !== null; }).map(function (p) { return { x: p.context, y: p[key], p: p }; }) };
      });
    }
    var cx = F.curve.map(function (p) { return p.context; }).filter(function (c) { return c > 0; });
    var xr = cx.length ? logRange(Math.min.apply(null, cx), Math.max.apply(null, cx), false) : {};
    function axes(ylabel, key) {
      var x = { type: 'logarithmic', grid: LOG_GRID, min: xr.min, max: xr.max, title: { display: true, text: 'context (tokens in the cache)' }, ticks: logTicks(function (v) { return si(v); }) };
      if (key === 'total_memory_bytes') return { x: x, y: bytesAxis(V.axes && V.axes.llm_memory, ylabel) };
      var ys = F.curve.map(function (p) { return p[key]; }).filter(function (v) { return v > 0; });
      var yr = ys.length ? logRange(Math.min.apply(null, ys), Math.max.apply(null, ys), false) : {};
      return { x: x, y: { type: 'logarithmic', grid: LOG_GRID, min: yr.min, max: yr.max, title: { display: true, text: ylabel }, ticks: logTicks(function (v) { return si(v); }) } };
    }
    var DOM = { weights: 'the weights dominate', kv_cache: 'the KV cache dominates', activations: 'activations dominate' };
    var sp = document.getElementById('llm-speed-chart');
    if (sp && F.curve.some(function (p) { return p.tokens_per_s !== null; })) {
      charts.llmSpeed = new Chart(sp, { type: 'line', data: { datasets: sets('tokens_per_s') },
        options: { parsing: false, scales: axes('decode tokens/s (' + F.hardware + ')', 'tokens_per_s'),
          plugins: { tooltip: { callbacks: { label: function (c) { var p = c.raw.p;
            return 'batch ' + p.batch + ', context ' + int(p.context) + ': ' + si(p.tokens_per_s) + ' tokens/s (' + DOM[p.dominant_bytes] + ')'; } } } } } });
    }
    var mp = document.getElementById('llm-memory-chart');
    if (mp) {
      var ds = sets('total_memory_bytes');
      var fit = F.largest_context;
      if (fit) {
        var xs = F.curve.map(function (p) { return p.context; });
        ds.push({ label: 'memory ' + bytes(fit.budget_bytes), borderColor: '#e03131', borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0,
          data: [{ x: Math.min.apply(null, xs), y: fit.budget_bytes }, { x: Math.max.apply(null, xs), y: fit.budget_bytes }] });
      }
      charts.llmMemory = new Chart(mp, { type: 'line', data: { datasets: ds },
        options: { parsing: false, scales: axes('weights + step peak', 'total_memory_bytes'),
          plugins: { tooltip: { callbacks: { label: function (c) { var p = c.raw.p;
            return p ? 'batch ' + p.batch + ', context ' + int(p.context) + ': ' + bytes(p.total_memory_bytes) + ' (KV ' + bytes(p.kv_cache_bytes) + ')' : c.dataset.label; } } } } } });
    }
  }

  /* ---------- predicted vs measured ---------- */
  function validationChart() {
    var cv = document.getElementById('validation-chart');
    if (!cv || !window.Chart || !R.measured) return;
    var keyToRow = {};
    rows.forEach(function (r, i) { keyToRow[r[C.key]] = i; });
    var pts = [], lo = Infinity, hi = 0;
    R.measured.points.forEach(function (p) {
      if (p[1] === null || p[2] === null || !(p[1] > 0) || !(p[2] > 0)) return;
      pts.push({ x: p[1], y: p[2], keys: p[0] });
      lo = Math.min(lo, p[1], p[2]); hi = Math.max(hi, p[1], p[2]);
    });
    if (!pts.length) return;
    var vr = logRange(lo, hi, true);  // a point at 10 ms on a 10 ms edge was half cut off
    lo = vr.min; hi = vr.max;
    charts.validation = new Chart(cv, {
      type: 'scatter',
      data: { datasets: [
        { type: 'line', label: 'measured = predicted', data: [{ x: lo, y: lo }, { x: hi, y: hi }], borderColor: '#1d2433', borderWidth: 1, pointRadius: 0, isRoof: true },
        { type: 'line', label: '\u00b125%', data: [{ x: lo, y: lo * 1.25 }, { x: hi, y: hi * 1.25 }], borderColor: '#adb5bd', borderDash: [4, 4], borderWidth: 1, pointRadius: 0, isRoof: true },
        { type: 'line', label: '', data: [{ x: lo, y: lo * 0.75 }, { x: hi, y: hi * 0.75 }], borderColor: '#adb5bd', borderDash: [4, 4], borderWidth: 1, pointRadius: 0, isRoof: true },
        { label: pts.length + ' nodes or fused groups', data: pts, backgroundColor: 'rgba(47,158,68,.7)', pointRadius: pts.length > 5000 ? 1.5 : 4 }
      ] },
      options: {
        parsing: false,
        scales: { x: { type: 'logarithmic', grid: LOG_GRID, min: lo, max: hi, title: { display: true, text: 'predicted time (s)' }, ticks: logTicks(secs) },
                  y: { type: 'logarithmic', grid: LOG_GRID, min: lo, max: hi, title: { display: true, text: 'measured time (s)' }, ticks: logTicks(secs) } },
        plugins: { legend: { labels: { filter: function (l) { return !!l.text; } } },
          tooltip: { filter: function (c) { return !c.dataset.isRoof; }, callbacks: {
            title: function (items) { return items[0].raw.keys.map(function (k) { var i = keyToRow[k]; return i === undefined ? '#' + k : nodeTitle(rows[i]); }).slice(0, 6); },
            label: function (c) { return 'predicted ' + secs(c.raw.x) + ', measured ' + secs(c.raw.y); } } } }
      }
    });
  }

  /* ---------- node table ---------- */
  var COLS = [
    { id: 'key', label: '#', num: true, sort: function (i) { return i; }, text: function (r) { return String(r[C.key]); } },
    { id: 'op_type', label: 'op type', cls: 'op', sort: function (i) { return opLabel(rows[i]); }, cell: function (r, td) {
      var s = el('span', 'swatch'); s.style.background = color(r[C.op_type]); td.appendChild(s); td.appendChild(document.createTextNode(opLabel(r))); } },
    { id: 'name', label: 'name', cls: 'name', sort: function (i) { return rows[i][C.name]; }, cell: function (r, td) { nameText(td, r[C.name]); } },
    { id: 'inputs', label: 'input shapes', cls: 'shape', sort: function (i) { return numel(rows[i][C.inputs]); }, cell: function (r, td) { shapeCell(td, r[C.inputs]); } },
    { id: 'outputs', label: 'output shapes', cls: 'shape', sort: function (i) { return numel(rows[i][C.outputs]); }, cell: function (r, td) { shapeCell(td, r[C.outputs]); } },
    { id: 'macs', label: 'MACs', num: true, col: C.macs, fmt: si },
    { id: 'flops', label: 'FLOPs', num: true, col: C.flops, fmt: si },
    { id: 'params', label: 'params', num: true, col: C.params, fmt: si },
    { id: 'bytes', label: 'bytes', num: true, sort: function (i) { return rows[i][C.bytes_read] + rows[i][C.bytes_written]; },
      text: function (r) { return bytes(r[C.bytes_read] + r[C.bytes_written]); },
      title: function (r) { return 'read ' + int(r[C.bytes_read]) + ' B, written ' + int(r[C.bytes_written]) + ' B'; } },
    { id: 'intensity', label: 'intensity', num: true, col: C.intensity, fmt: num, title: function () { return 'operations per byte moved'; } },
    { id: 'bound', label: 'bound', col: C.bound, when: hasPred, cell: function (r, td) { if (r[C.bound]) td.appendChild(el('span', 'badge ' + r[C.bound], r[C.bound])); } },
    { id: 'predicted_s', label: 'predicted', num: true, col: C.predicted_s, fmt: secs, when: hasPred },
    { id: 'measured_s', label: 'measured', num: true, col: C.measured_s, fmt: secs, when: hasMeas },
    { id: 'status', label: 'status', col: C.status, cell: function (r, td) { td.appendChild(el('span', 'badge ' + r[C.status], r[C.status].replace(/_/g, ' '))); } }
  ].filter(function (c) { return c.when !== false; });
  COLS.forEach(function (c) {
    if (!c.sort) c.sort = function (i) { return rows[i][c.col]; };
    if (!c.text && !c.cell) c.text = function (r) { var v = r[c.col]; return v === null ? '' : c.fmt(v); };
  });

  var state = { sort: null, dir: 1, op: '', status: '', bound: '', q: '', page: 0, size: 50, selected: null };
  var PRINT_ROWS_MAX = 5000, printing = false;  // printing: every row of the view, up to the bound
  var order = null, view = null, hay = null;

  function haystack(i) {
    if (!hay) {
      hay = new Array(rows.length);
      for (var k = 0; k < rows.length; k++) {
        var r = rows[k], parts = ['#' + r[C.key], r[C.name], opLabel(r)];
        r[C.inputs].concat(r[C.outputs]).forEach(function (ti) { if (ti !== null) parts.push(T[ti][0]); });
        hay[k] = parts.join('\u0001').toLowerCase();
      }
    }
    return hay[i];
  }
  function compute() {
    if (!order) {
      order = new Array(rows.length);
      for (var i = 0; i < rows.length; i++) order[i] = i;
      if (state.sort) {
        var c = COLS.filter(function (x) { return x.id === state.sort; })[0], dir = state.dir;
        var keys = new Array(rows.length);
        for (var j = 0; j < rows.length; j++) keys[j] = c.sort(j);
        order.sort(function (a, b) {
          var x = keys[a], y = keys[b];
          var xn = x === null || x === undefined, yn = y === null || y === undefined;
          if (xn || yn) return xn && yn ? a - b : (xn ? 1 : -1);  // unknown values last in both directions
          if (x < y) return -dir;
          if (x > y) return dir;
          return a - b;
        });
      }
    }
    var q = state.q.trim().toLowerCase(), exact = null;
    if (/^#\S+$/.test(q)) exact = q.slice(1);
    view = [];
    for (var k = 0; k < order.length; k++) {
      var i2 = order[k], r = rows[i2];
      if (state.op && opLabel(r) !== state.op) continue;
      if (state.status && r[C.status] !== state.status) continue;
      if (state.bound && r[C.bound] !== state.bound) continue;
      if (exact !== null) { if (String(r[C.key]).toLowerCase() !== exact) continue; }
      else if (q && haystack(i2).indexOf(q) < 0) continue;
      view.push(i2);
    }
  }
  var tbody, pageInfo, countEl;
  function renderPage() {
    var pages = Math.max(1, Math.ceil(view.length / state.size));
    if (state.page >= pages) state.page = pages - 1;
    var all = printing && view.length <= PRINT_ROWS_MAX;
    var start = all ? 0 : state.page * state.size, end = all ? view.length : Math.min(view.length, start + state.size);
    var frag = document.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var i = view[k], r = rows[i], tr = document.createElement('tr');
      tr.dataset.row = i;
      if (state.selected === i) tr.className = 'selected';
      for (var j = 0; j < COLS.length; j++) {
        var c = COLS[j], td = document.createElement('td');
        td.className = (c.num ? 'num ' : '') + (c.cls || '');
        if (c.cell) c.cell(r, td); else td.textContent = c.text(r);
        if (c.title) td.title = c.title(r);
        tr.appendChild(td);
      }
      frag.appendChild(tr);
    }
    tbody.textContent = '';
    tbody.appendChild(frag);
    if (!view.length) { var tr0 = el('tr'), td0 = el('td', null, 'No node matches these filters.'); td0.colSpan = COLS.length; tr0.appendChild(td0); tbody.appendChild(tr0); }
    countEl.textContent = view.length === rows.length ? int(rows.length) + ' nodes' : int(view.length) + ' of ' + int(rows.length) + ' nodes match';
    pageInfo.textContent = !view.length ? '' : all ? 'all ' + int(view.length) + ' rows'
      : 'rows ' + int(start + 1) + '\u2013' + int(end) + ' \u00b7 page ' + int(state.page + 1) + ' of ' + int(pages);
    printNote(all, start, end);
    document.getElementById('pg-first').disabled = document.getElementById('pg-prev').disabled = state.page === 0;
    document.getElementById('pg-next').disabled = document.getElementById('pg-last').disabled = state.page >= pages - 1;
  }
  /* what the printed table holds: the user cannot see the (hidden) controls on paper */
  function printNote(all, start, end) {
    var p = document.getElementById('print-note');
    if (!p) return;
    var f = [];
    if (state.op) f.push('op type ' + state.op);
    if (state.status) f.push('status ' + state.status.replace(/_/g, ' '));
    if (state.bound) f.push(state.bound + '-bound');
    if (state.q.trim()) f.push('search \u201c' + state.q.trim() + '\u201d');
    var sorted = state.sort ? ', sorted by ' + COLS.filter(function (c) { return c.id === state.sort; })[0].label +
      (state.dir > 0 ? ' (ascending)' : ' (descending)') : '';
    var which = f.length ? 'the ' + int(view.length) + ' of ' + int(rows.length) + ' nodes matching ' + f.join(', ')
      : 'all ' + int(rows.length) + ' nodes';
    p.textContent = all ? 'Printed: ' + which + sorted + '.'
      : 'Printed: rows ' + int(start + 1) + '\u2013' + int(end) + ' of ' + which + sorted + '; a table of over ' + int(PRINT_ROWS_MAX) +
        ' rows prints one page at a time. This HTML file, opened in a browser, and the JSON report (onnxperf report MODEL --format json) have every node.';
  }
  function refresh(resort) { if (resort) order = null; compute(); renderPage(); }
  function detail(i) {
    var box = document.getElementById('node-detail'), r = rows[i];
    box.textContent = '';
    var panel = el('div', 'panel');
    panel.appendChild(el('h3', null, nodeTitle(r) + ' \u2014 ' + opLabel(r)));
    var dl = el('dl', 'facts');
    function add(k, v) { dl.appendChild(el('dt', null, k)); var dd = el('dd'); if (v instanceof Node) dd.appendChild(v); else dd.textContent = v; dl.appendChild(dd); }
    function tensors(list) {
      var t = el('table', 'io');
      list.forEach(function (ti) { var tr = el('tr'); if (ti === null) { tr.appendChild(el('td', null, '(absent)')); } else { var name = el('td', 'mono'); nameText(name, T[ti][0]); tr.appendChild(name); tr.appendChild(el('td', null, T[ti][1])); tr.appendChild(el('td', 'mono', T[ti][2] === null ? '?' : T[ti][2])); } t.appendChild(tr); });
      return t;
    }
    var nm = el('span', 'mono'); nameText(nm, r[C.name] || '(unnamed)'); add('name', nm);
    add('status', r[C.status].replace(/_/g, ' '));
    add('inputs', tensors(r[C.inputs]));
    add('outputs', tensors(r[C.outputs]));
    add('MACs', int(r[C.macs])); add('FLOPs', int(r[C.flops]));
    if (r[C.int_ops]) add('integer ops', int(r[C.int_ops]));
    add('params', int(r[C.params]));
    add('bytes read / written', int(r[C.bytes_read]) + ' B / ' + int(r[C.bytes_written]) + ' B');
    add('intensity', r[C.intensity] === null ? '\u2014' : g3(r[C.intensity]) + ' ' + OPB);
    if (hasPred) { add('predicted time', secs(r[C.predicted_s]) + (r[C.bound] ? ' (' + r[C.bound] + '-bound)' : '')); }
    if (hasMeas) add('measured time', secs(r[C.measured_s]));
    panel.appendChild(dl);
    box.appendChild(panel);
  }
  function showNode(key) {
    var box = document.getElementById('node-search');
    box.value = '#' + key; state.q = box.value; state.op = state.status = state.bound = '';
    document.getElementById('node-op').value = ''; document.getElementById('node-status').value = '';
    var bsel = document.getElementById('node-bound'); if (bsel) bsel.value = '';
    state.page = 0; refresh(false);
    if (view.length) { state.selected = view[0]; renderPage(); detail(view[0]); }
    document.getElementById('nodes').scrollIntoView();
  }
  function table() {
    var tableEl = document.getElementById('node-table');
    if (!tableEl) return;
    var thr = tableEl.querySelector('thead tr');
    COLS.forEach(function (c) {
      var th = el('th', c.num ? 'num' : ''), b = el('button', null, c.label);
      b.type = 'button'; b.dataset.col = c.id; th.dataset.col = c.id; th.setAttribute('aria-sort', 'none');
      b.addEventListener('click', function () {
        if (state.sort === c.id) state.dir = -state.dir; else { state.sort = c.id; state.dir = c.num && c.id !== 'key' ? -1 : 1; }
        thr.querySelectorAll('th').forEach(function (h) { h.setAttribute('aria-sort', 'none'); });
        th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
        state.page = 0; refresh(true);
      });
      th.appendChild(b); thr.appendChild(th);
    });
    tbody = tableEl.querySelector('tbody');
    pageInfo = document.getElementById('page-info');
    countEl = document.getElementById('node-count');
    var opSel = document.getElementById('node-op'), counts = {};
    rows.forEach(function (r) { var l = opLabel(r); counts[l] = (counts[l] || 0) + 1; });
    Object.keys(counts).sort().forEach(function (l) { var o = el('option', null, l + ' (' + int(counts[l]) + ')'); o.value = l; opSel.appendChild(o); });
    var stSel = document.getElementById('node-status'), sc = {};
    rows.forEach(function (r) { sc[r[C.status]] = (sc[r[C.status]] || 0) + 1; });
    ['counted', 'zero_by_design', 'unsupported', 'unknown_shape', 'rule_error'].forEach(function (s) {
      if (!sc[s]) return; var o = el('option', null, s.replace(/_/g, ' ') + ' (' + int(sc[s]) + ')'); o.value = s; stSel.appendChild(o); });
    var bSel = document.getElementById('node-bound');
    if (bSel) {
      if (hasPred) { ['compute', 'fill', 'memory', 'dispatch', 'none'].forEach(function (b) { var o = el('option', null, b === 'fill' ? 'fill-limited' : b + '-bound'); o.value = b; bSel.appendChild(o); }); }
      else bSel.remove();
    }
    opSel.addEventListener('change', function () { state.op = opSel.value; state.page = 0; refresh(false); });
    stSel.addEventListener('change', function () { state.status = stSel.value; state.page = 0; refresh(false); });
    if (bSel && hasPred) bSel.addEventListener('change', function () { state.bound = bSel.value; state.page = 0; refresh(false); });
    var search = document.getElementById('node-search'), timer = null;
    search.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = search.value; state.page = 0; refresh(false); }, rows.length > 20000 ? 200 : 60);
    });
    var size = document.getElementById('page-size');
    size.addEventListener('change', function () { state.size = Number(size.value); state.page = 0; renderPage(); });
    function go(p) { state.page = p; renderPage(); }
    document.getElementById('pg-first').addEventListener('click', function () { go(0); });
    document.getElementById('pg-prev').addEventListener('click', function () { go(Math.max(0, state.page - 1)); });
    document.getElementById('pg-next').addEventListener('click', function () { go(state.page + 1); });
    document.getElementById('pg-last').addEventListener('click', function () { go(Math.ceil(view.length / state.size) - 1); });
    tbody.addEventListener('click', function (e) {
      var tr = e.target.closest('tr');
      if (!tr || tr.dataset.row === undefined) return;
      state.selected = Number(tr.dataset.row);
      tbody.querySelectorAll('tr.selected').forEach(function (x) { x.className = ''; });
      tr.className = 'selected';
      detail(state.selected);
    });
    refresh(true);
  }

  /* links from the static tables ("#12") to the node table */
  document.addEventListener('click', function (e) {
    var a = e.target.closest && e.target.closest('a[data-node]');
    if (!a) return;
    e.preventDefault();
    showNode(a.getAttribute('data-node'));
  });

  var seg = document.getElementById('roofline-mode');
  if (seg) seg.addEventListener('click', function (e) {
    var b = e.target.closest('button');
    if (!b) return;
    rooflineMode = b.dataset.mode;
    seg.querySelectorAll('button').forEach(function (x) { x.setAttribute('aria-pressed', String(x === b)); });
    document.getElementById('roofline-hover').textContent = '';
    rooflineChart();
  });
  var save = document.getElementById('save-json');
  if (save) save.addEventListener('click', function () {
    var blob = new Blob([JSON.stringify(R, null, 1)], { type: 'application/json' });
    var a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = (R.model.name || 'model').replace(/[^A-Za-z0-9._-]+/g, '_') + '.report.json';
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
  });
  /* ---------- printing ---------- */
  /* Chart.js cannot see the print layout when beforeprint fires (the page still has its screen
   * layout), so each chart is redrawn at an explicit width that fits an A4 or Letter page (CSS px,
   * 12 mm margins, the panel's padding), at twice the pixel density; afterprint restores it. */
  var PRINT_CHART_W = 660;
  function beforePrint() {
    if (printing) return;  // page.pdf() and the print dialog may both fire it
    printing = true;
    if (tbody) renderPage();
    Object.keys(charts).forEach(function (k) {
      var ch = charts[k], box = ch.canvas.parentNode;
      ch.options.devicePixelRatio = Math.max(2, window.devicePixelRatio || 1);
      ch.resize(Math.min(box.clientWidth || PRINT_CHART_W, PRINT_CHART_W), box.clientHeight || 300);
    });
    timings.printed_rows = tbody ? tbody.rows.length : 0;
  }
  function afterPrint() {
    if (!printing) return;
    printing = false;
    if (tbody) renderPage();
    Object.keys(charts).forEach(function (k) { charts[k].options.devicePixelRatio = undefined; charts[k].resize(); });
  }
  window.addEventListener('beforeprint', beforePrint);
  window.addEventListener('afterprint', afterPrint);

  table();
  timings.table_ms = performance.now() - t0;
  timings.table_at_ms = performance.now();  // since navigation start
  document.body.dataset.table = 'ready';
  requestAnimationFrame(function () { timings.table_paint_at_ms = performance.now(); });
  function finish() {
    var t1 = performance.now();
    [costChart, rooflineChart, memoryChart, llmCharts, validationChart].forEach(function (f) {
      var t2 = performance.now();
      try { f(); } catch (err) { console.error('onnxperf report: ' + f.name + ': ' + err); }
      timings.charts[f.name] = performance.now() - t2;
    });
    timings.charts_ms = performance.now() - t1;
    timings.ready_ms = performance.now() - t0;
    timings.ready_at_ms = performance.now();
    document.body.dataset.ready = 'true';
  }
  if (rows.length > 20000) requestAnimationFrame(function () { setTimeout(finish, 0); }); else finish();
})();
