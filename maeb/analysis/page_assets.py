"""The explorer page's style and script (maeb.analysis.page writes both into the page). The script:
filters, sorting, the model card, the URL of a view, its CSV, and the ranks, means and rank intervals
redone for each choice of tasks and Borda rule, equal to what maeb.analysis.leaderboard and
.uncertainty compute in Python (tests/test_explorer.py checks them against each other in Chromium)."""

from .tables import BODY_CSS

CSS = (
    BODY_CSS,
    "body { max-width: 100%; } h1 { font-size: 1.5rem; } p, li { max-width: 60rem; line-height: 1.4; }",
    ".filters { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 0.5rem 0; font-size: 13px; }",
    ".filters label { display: flex; flex-direction: column; gap: 2px; }",
    ".filters select, .filters input { font-size: 13px; max-width: 12rem; }",
    ".tablebox { overflow: auto; max-width: 100%; max-height: 75vh; border: 1px solid #ccc; }",
    "table { border-collapse: separate; border-spacing: 0; font-size: 13px; }",
    "th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: right; white-space: nowrap; }",
    "thead th { position: sticky; top: 0; background: #f4f4f4; cursor: pointer; z-index: 2; vertical-align: bottom; }",
    # headers wrap (task type and task names at their capitals, <wbr>): long names no longer widen the table
    "thead th { white-space: normal; }",
    # model names break after '/', '-' or '_' (<wbr>), within a word only when nothing else fits
    "th.model, td.model { position: sticky; left: 0; background: #fff; text-align: left; z-index: 1;"
    " white-space: normal; overflow-wrap: anywhere; min-width: 13rem; max-width: 20rem; }",
    "@media (max-width: 600px) { th.model, td.model { min-width: 8rem; max-width: 10rem; } }",
    "thead th.model { z-index: 3; background: #f4f4f4; }",
    "tbody tr { cursor: pointer; } tbody tr:hover td { outline: 1px solid #999; }",
    "tr.baseline td.model::after { content: ' baseline'; font-size: 11px; color: #555; }",
    # chance and majority: under the models, grey and italic, no score shading, never sorted among them
    "tfoot td { background: #f1f1f1; color: #444; font-style: italic; border-top: 1px dashed #888; }",
    "tfoot td.model { background: #f1f1f1; } tfoot tr { cursor: default; }",
    "span.flat { color: #a33; cursor: help; }",
    "abbr.blank { color: #555; text-decoration: underline dotted; cursor: help; }",
    ".legend { display: flex; align-items: center; gap: 6px; font-size: 12px; flex-wrap: wrap; }",
    ".scale { width: 160px; height: 12px; border: 1px solid #999; }",
    "figure { margin: 1rem 0; max-width: 100%; } figure img { max-width: 100%; height: auto; }",
    "figcaption { font-size: 13px; color: #444; }",
    "dialog { width: min(46rem, 90vw); max-height: 88vh; overflow: auto; box-sizing: border-box; padding: 12px; }",
    "dialog h2 { font-size: 1.1rem; overflow-wrap: anywhere; }",
    # the card's table wraps its cells (provenance lines are long) rather than run off a phone's screen
    "dialog table { font-size: 12px; width: 100%; }",
    "dialog td, dialog th { white-space: normal; overflow-wrap: anywhere; text-align: left; }",
    "@media (max-width: 600px) { dialog td:nth-child(2), dialog th:nth-child(2) { display: none; } }",  # type: room for names
    "dl.card { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; font-size: 13px; }",
    # a fact is one token (a revision hash, a URL): it may break anywhere rather than widen the card
    "dl.card { grid-template-columns: auto minmax(0, 1fr); } dl.card dd { margin: 0; overflow-wrap: anywhere; }",
    # the card breaks names where the script put <wbr> (camel case, / _ - .), never inside a word
    "dialog td, dialog th { overflow-wrap: break-word; word-break: normal; }",
    # fixed columns: a cell wraps at its <wbr> within its column, and breaks a piece only if it alone is wider
    "dialog table { table-layout: fixed; } dialog th:nth-child(1) { width: 32%; } dialog th:nth-child(2) { width: 18%; }"
    " dialog th:nth-child(3) { width: 20%; }",
    ".filters .what { flex-basis: 100%; font-weight: bold; }",
    "details.pick { position: relative; } details.pick summary { cursor: pointer; padding: 2px 0; }",
    "details.pick .opts { position: absolute; z-index: 5; background: #fff; border: 1px solid #999; padding: 4px 8px;"
    " max-height: 50vh; overflow: auto; max-width: min(22rem, 80vw); }",
    "details.pick .opts label { flex-direction: row; gap: 4px; white-space: nowrap; }",
    # a closed panel takes no room; on a phone an open one sits in the flow, never past the window's edge
    "details.pick:not([open]) .opts { display: none; }",
    "@media (max-width: 600px) { details.pick .opts { position: static; max-width: 100%; }"
    " details.pick .opts label { white-space: normal; overflow-wrap: anywhere; } }",
    ".actions { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; }",
    "thead th[aria-sort=ascending]::after { content: ' \\25B2'; } thead th[aria-sort=descending]::after { content: ' \\25BC'; }",
    "thead th:focus, tbody tr:focus, abbr.blank:focus { outline: 2px solid #14c; outline-offset: -2px; }",
    "#info { min-height: 1.4em; font-size: 13px; color: #333; } #nomatch { padding: 8px; font-style: italic; }",
    "#cite pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; background: #f6f6f6; padding: 6px; }",
)

SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('page-data').textContent);
  var X = JSON.parse(document.getElementById('explore-data').textContent);
  var meta = JSON.parse(document.getElementById('leaderboard-data').textContent);
  var benches = JSON.parse(document.getElementById('bench-data').textContent);
  var table = document.getElementById('leaderboard'), body = table.tBodies[0], headRow = table.tHead.rows[0];
  var info = {}, order = X.tasks.map(function (t) { info[t.name] = t; return t.name; });
  var RULES = {mteb: "mteb's rule: on each task a model earns n_models - rank points (n_models: the models shown for this choice of tasks)",
    paper: "the MAEB paper's rule: on each task a model earns n_task - rank points (n_task: the models that ran that task), so it scores only against them"};
  function $(id) { return document.getElementById(id); }
  function picked(name) {
    return Array.from($('f-' + name).querySelectorAll('input:checked')).map(function (i) { return i.value; });
  }
  function mean(values) {
    if (!values.length || values.some(function (v) { return v == null; })) return null;
    return values.reduce(function (a, b) { return a + b; }, 0) / values.length;
  }
  function averageRanks(values) {  // scipy's rankdata(method="average"): 1 for the smallest, ties share
    var idx = values.map(function (v, i) { return i; }).sort(function (a, b) { return values[a] - values[b]; });
    var out = new Array(values.length), i = 0;
    while (i < idx.length) {
      var j = i;
      while (j + 1 < idx.length && values[idx[j + 1]] === values[idx[i]]) j++;
      for (var k = i; k <= j; k++) out[idx[k]] = (i + j) / 2 + 1;
      i = j + 1;
    }
    return out;
  }
  // -- the rank intervals of the chosen tasks, as maeb.analysis.uncertainty.compute draws them on their board: every
  // random number is a hash of the seed, the draw, what it moves and its place there (uncertainty.uniforms), and
  // each sum is made in compute's order, so the draws and the intervals are Python's
  var B = X.bootstrap, moving = {}, drawn = {}, intervalsOf = {};
  if (B) B.cells.forEach(function (c) { (moving[c[1]] = moving[c[1]] || []).push(c); });
  function mix(x) {  // murmur3's 32-bit finaliser
    x ^= x >>> 16; x = Math.imul(x, 0x85ebca6b); x ^= x >>> 13; x = Math.imul(x, 0xc2b2ae35); x ^= x >>> 16;
    return x >>> 0;
  }
  function step(x, v) { return mix((((x ^ v) >>> 0) + 0x9e3779b9) >>> 0); }
  function nameKey(model, task) {  // FNV-1a of "model NUL task" in UTF-8 (uncertainty.name_key)
    var h = 0x811c9dc5;
    new TextEncoder().encode(model + '\0' + task).forEach(function (b) { h = Math.imul(h ^ b, 0x01000193) >>> 0; });
    return h;
  }
  function streamOf(stream, key) { return step(step(B.seed >>> 0, stream), key); }
  function uniform(x, d, j) { return step(step(x, d), j) / 4294967296; }
  function movedOf(c) {  // the cell's value in each draw (uncertainty._moved), drawn once per page
    var id = c[0] + '\0' + c[1];
    if (drawn[id]) return drawn[id];
    var key = nameKey(c[0], c[1]), value = X.partial[c[1]][c[0]], bounds = B.bounds[c[1]], combos = c[3];
    var xe = streamOf(2, key), xb = streamOf(3, key), out = new Float64Array(B.draws);
    var means = combos.map(function (v) { var s = 0; for (var i = 0; i < v.length; i++) s += v[i]; return v.length ? s / v.length : 0; });
    for (var d = 0; d < B.draws; d++) {
      var shift = 0;
      if (combos.length) {
        var total = 0, at = 0;
        for (var ci = 0; ci < combos.length; ci++) {
          var v = combos[ci], n = v.length, acc = 0;
          if (!n) continue;
          for (var e = 0; e < n; e++) acc += v[Math.floor(uniform(xe, d, at + e) * n)];
          at += n;
          total += acc / n - means[ci];
        }
        shift = total / combos.length;
      }
      if (c[2]) shift = shift + c[2] * (2 * uniform(xb, d, 0) - 1);
      var moved = value + shift;
      if (bounds && bounds[0] != null) moved = Math.max(moved, bounds[0]);  // within the metric's range, as np.maximum
      if (bounds && bounds[1] != null) moved = Math.min(moved, bounds[1]);  // then np.minimum do
      out[d] = moved;
    }
    drawn[id] = out;
    return out;
  }
  function intervals(names, rule, rows) {  // {model: [low, high]}, ranks among the shown rows in each draw
    var id = rule + '\n' + names.join('\n');
    if (intervalsOf[id]) return intervalsOf[id];
    var n = rows.length, k = names.length, at = {};
    rows.forEach(function (r, i) { at[r.model] = i; });
    var columns = names.map(function (t) {
      var p = X.partial[t] || {}, voters = Object.keys(p), sign = info[t].lower ? 1 : -1, nv = rule === 'mteb' ? n : voters.length;
      function points(values) {  // the rows' Borda points on the task, its voters' values given
        var r = averageRanks(values.map(function (v) { return sign * v; })), out = new Float64Array(n);
        voters.forEach(function (m, i) { if (m in at) out[at[m]] = nv - r[i]; });
        return out;
      }
      var values = voters.map(function (m) { return p[m]; });
      var cells = (moving[t] || []).map(function (c) { return [voters.indexOf(c[0]), movedOf(c)]; });
      return {base: points(values), values: values, cells: cells, points: points};
    });
    var resample = B.sources.indexOf('tasks') >= 0, xt = streamOf(1, 0), w = new Float64Array(k), tot = new Float64Array(n);
    var ranks = rows.map(function () { return new Float64Array(B.draws); });
    for (var d = 0; d < B.draws; d++) {
      w.fill(resample ? 0 : 1);
      if (resample) for (var i = 0; i < k; i++) w[Math.floor(uniform(xt, d, i) * k)] += 1;  // (uncertainty.task_weights)
      tot.fill(0);
      for (var j = 0; j < k; j++) {
        var col = columns[j], pts = col.base;
        if (!w[j]) continue;
        if (col.cells.length) {
          var vals = col.values.slice();
          col.cells.forEach(function (c) { vals[c[0]] = c[1][d]; });
          pts = col.points(vals);
        }
        for (var r = 0; r < n; r++) tot[r] += w[j] * pts[r];  // half points times whole weights: exact in any order
      }
      for (var a = 0; a < n; a++) {
        var above = 0;
        for (var b = 0; b < n; b++) if (tot[b] > tot[a]) above++;
        ranks[a][d] = above + 1;  // ties share the best rank
      }
    }
    var tail = (1 - B.level) / 2, lo = Math.floor((B.draws - 1) * tail), hi = Math.ceil((B.draws - 1) * (1 - tail));
    var out = {};  // numpy's quantile, methods "lower" and "higher"
    rows.forEach(function (r, i) { var s = Array.from(ranks[i]).sort(function (x, y) { return x - y; }); out[r.model] = [s[lo], s[hi]]; });
    intervalsOf[id] = out;
    return out;
  }
  // the board of the chosen tasks, as maeb.analysis.leaderboard.aggregate(scores, tasks=names, borda=rule) makes it
  function compute(names, rule) {
    var models = Object.keys(X.complete).filter(function (m) {
      return names.some(function (t) { return X.complete[m][t] != null; });
    }).sort();
    var points = {};
    names.forEach(function (t) {
      var p = X.partial[t] || {}, voters = Object.keys(p), sign = info[t].lower ? 1 : -1;
      var ranks = averageRanks(voters.map(function (m) { return sign * p[m]; }));
      var n = rule === 'mteb' ? models.length : voters.length;
      voters.forEach(function (m, i) { points[m] = (points[m] || 0) + n - ranks[i]; });
    });
    var ranked = Object.keys(points), rank = {};  // every model with a score takes a rank number, shown or not
    ranked.forEach(function (m) {
      rank[m] = 1 + ranked.filter(function (o) { return points[o] > points[m]; }).length;
    });
    var rows = models.map(function (m) {
      var tasks = {}, byType = {};
      names.forEach(function (t) {
        var v = X.complete[m][t]; tasks[t] = v == null ? null : v;
        (byType[info[t].type] = byType[info[t].type] || []).push(tasks[t]);
      });
      var types = {};
      Object.keys(byType).sort().forEach(function (ty) { types[ty] = mean(byType[ty]); });
      var mt = mean(names.map(function (t) { return tasks[t]; }));
      return {model: m, rank: rank[m], points: points[m] || 0, mean_task: mt,
        mean_tasktype: mean(Object.keys(types).map(function (k) { return types[k]; })),
        n_tasks: names.filter(function (t) { return tasks[t] != null; }).length, types: types, tasks: tasks};
    });
    rows.sort(function (a, b) {
      var x = a.mean_task == null ? -1 : a.mean_task, y = b.mean_task == null ? -1 : b.mean_task;
      return a.rank - b.rank || y - x || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0);
    });
    var shown = {}; models.forEach(function (m) { shown[m] = true; });
    var hidden = ranked.filter(function (m) { return !shown[m]; }).sort();
    return {rows: rows, hidden: hidden.map(function (m) { return [m, rank[m]]; }), n_models: models.length};
  }
  function selection() {
    var bench = $('f-bench').value, types = picked('type'), domains = picked('domain'), langs = picked('lang');
    var groups = picked('group'), tasks = picked('task');
    var inBench = bench ? benches[bench] : null;
    return order.filter(function (t) {
      var i = info[t];
      return (!inBench || inBench.indexOf(t) >= 0) && (!types.length || types.indexOf(i.type) >= 0)
        && (!domains.length || i.domains.some(function (d) { return domains.indexOf(d) >= 0; }))
        && (!langs.length || i.languages.some(function (l) { return langs.indexOf(l) >= 0; }))
        && (!groups.length || groups.indexOf(i.group) >= 0) && (!tasks.length || tasks.indexOf(t) >= 0);
    });
  }
  function pct(v) { return v == null ? '' : (100 * v).toFixed(1); }
  function shade(td, v) { td.style.background = v == null || v < 0 || v > 1 ? '' : 'hsl(212, 70%, ' + (97 - 42 * v).toFixed(0) + '%)'; }
  function setMean(td, row, v, names) {
    td.dataset.v = v == null ? '' : v;
    shade(td, v);
    if (v != null) { td.textContent = pct(v); return; }
    var lacking = names.filter(function (t) { return row.tasks[t] == null; });
    var ab = document.createElement('abbr'); ab.className = 'blank'; ab.tabIndex = 0; ab.textContent = 'n/a';
    ab.title = 'no mean: ' + row.model + ' lacks ' + lacking.length + ' task' + (lacking.length === 1 ? '' : 's')
      + ' of this mean (' + lacking.join(', ') + '); its Borda rank still counts every task it has';
    td.replaceChildren(ab);
  }
  var sort = null, last = null;  // the column a reader sorted by ({key, dir}); null: the board's own order
  function keyOf(th) {
    return th.dataset.task ? 'task:' + th.dataset.task : th.dataset.type ? 'type:' + th.dataset.type : th.className.split(' ')[0];
  }
  function cellOf(tr, key) {
    return Array.from(tr.cells).find(function (c) {
      return (c.dataset.task ? 'task:' + c.dataset.task : c.dataset.type ? 'type:' + c.dataset.type : c.className.split(' ')[0]) === key;
    });
  }
  function intervalNote(shown) {  // what the rank intervals are for this choice, or why there are none
    if (!X.intervals) return ' No rank intervals: the page was written without --uncertainty DRAWS.';
    if (!B) return shown ? '' : ' The rank intervals are of the whole board under its own rule (' + X.rule + '): this page holds no'
      + ' bootstrap recipe to redo them for this choice, so they are hidden.';
    var pct = Math.round(100 * B.level) + '%', over = B.sources.join(', ');
    var none = B.sources.some(function (s) { return s !== 'tasks'; }) && !B.cells.length
      ? ' No result records few-shot experiments or stability bands (a published main_scores.csv records none), so only the'
        + ' resampling of the tasks moves the ranks.' : '';
    return (shown ? ' Each rank interval holds the central ' + pct + ' of the ranks over ' + B.draws + ' bootstrap draws (over ' + over
      + '), redone for the chosen tasks and rule as maeb.analysis.uncertainty.compute does on their board.' : '') + none;
  }
  function apply(fromHash) {
    var names = selection(), rule = $('f-rule').value, view = $('f-view').value;
    var all = names.length === order.length, res = compute(names, rule), by = {};
    res.rows.forEach(function (r) { by[r.model] = r; });
    var types = {}; names.forEach(function (t) { types[info[t].type] = true; });
    var chosen = {}; names.forEach(function (t) { chosen[t] = true; });
    res.intervals = B && names.length && res.rows.length ? intervals(names, rule, res.rows) : null;
    var showInterval = !!res.intervals || (all && rule === X.rule && !B);
    table.querySelectorAll('th.task, td.task').forEach(function (c) { c.hidden = view === 'task types' || !chosen[c.dataset.task]; });
    table.querySelectorAll('th.ty, td.ty').forEach(function (c) { c.hidden = view === 'tasks' || !types[c.dataset.type]; });
    table.querySelectorAll('th.interval, td.interval').forEach(function (c) { c.hidden = !showInterval; });
    var q = $('f-search').value.toLowerCase(), model = $('f-model').value;
    var want = {size: $('f-size').value, license: $('f-license').value, open: $('f-open').value}, modality = $('f-modality').value;
    var visible = 0;
    Array.from(body.rows).forEach(function (tr) {
      var r = by[tr.dataset.model];
      var ok = !!r && (!q || tr.dataset.model.toLowerCase().indexOf(q) >= 0) && (!model || tr.dataset.model === model)
        && (!modality || tr.dataset.modality.split('|').indexOf(modality) >= 0);
      Object.keys(want).forEach(function (k) { if (want[k] && tr.dataset[k] !== want[k]) ok = false; });
      tr.hidden = !ok;
      if (ok) visible++;
      if (!r) return;
      var c = cellOf(tr, 'rank'); c.textContent = r.rank; c.dataset.v = r.rank;
      var iv = res.intervals && res.intervals[r.model];
      if (iv) { c = cellOf(tr, 'interval'); c.textContent = iv[0] === iv[1] ? iv[0] : iv[0] + '\u2013' + iv[1]; c.dataset.v = iv[0]; }
      setMean(cellOf(tr, 'mtask'), r, r.mean_task, names);
      setMean(cellOf(tr, 'mtype'), r, r.mean_tasktype, names);
      c = cellOf(tr, 'ntasks'); c.textContent = r.n_tasks + '/' + names.length; c.dataset.v = r.n_tasks;
      Object.keys(r.types).forEach(function (ty) {
        setMean(cellOf(tr, 'type:' + ty), r, r.types[ty], names.filter(function (t) { return info[t].type === ty; }));
      });
    });
    // the chance and majority rows: their means over the chosen tasks, where each has a level
    Array.from(table.tFoot ? table.tFoot.rows : []).forEach(function (tr, i) {
      if (tr.id === 'no-chance') return;
      function level(ns) { var v = ns.map(function (t) { return X.base[t] ? X.base[t][i] : null; }); return mean(v); }
      var tys = Object.keys(types).sort(), byType = tys.map(function (ty) { return level(names.filter(function (t) { return info[t].type === ty; })); });
      [['mtask', level(names)], ['mtype', mean(byType)]].forEach(function (kv) { var c = cellOf(tr, kv[0]); if (c) c.textContent = kv[1] == null ? '–' : pct(kv[1]); });
      tys.forEach(function (ty, k) { var c = cellOf(tr, 'type:' + ty); if (c) c.textContent = byType[k] == null ? '–' : pct(byType[k]); });
      var c = cellOf(tr, 'ntasks'); if (c) c.textContent = names.filter(function (t) { return X.base[t]; }).length + '/' + names.length;
    });
    // the board's order for this choice, then the reader's sort on top of it
    res.rows.forEach(function (r) { var tr = body.querySelector('tr[data-model="' + CSS.escape(r.model) + '"]'); if (tr) body.appendChild(tr); });
    Array.from(body.rows).forEach(function (tr) { if (!by[tr.dataset.model]) body.appendChild(tr); });
    if (sort) sortBy(sort.key, sort.dir);
    Array.from(headRow.cells).forEach(function (th) {
      th.setAttribute('aria-sort', sort && keyOf(th) === sort.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none');
    });
    $('nomatch').hidden = visible > 0;
    $('nomatch').textContent = names.length ? 'No model matches these filters: clear the search or a row filter.'
      : 'No task matches this choice of benchmark, task types, domains, languages, task modality and tasks.';
    document.querySelectorAll('details.pick').forEach(function (d) {
      var n = d.querySelectorAll('input:checked').length, of = d.querySelectorAll('input').length;
      d.querySelector('summary').textContent = d.dataset.label + ': ' + (n ? n + ' of ' + of : 'all');
    });
    var note = (all ? 'Ranked over all ' + names.length + ' tasks of the board' : 'Ranked over the ' + names.length + ' chosen tasks of ' + order.length
      + ' (as `maeb leaderboard --tasks` ranks them)') + ' by the Borda count under ' + RULES[rule] + '; a missing task earns 0; means over the chosen tasks.'
      + intervalNote(showInterval)
      + (res.hidden.length ? ' ' + res.hidden.length + ' model(s) with no complete chosen task are not shown but take rank numbers: '
        + res.hidden.slice(0, 5).map(function (h) { return h[0] + ' (rank ' + h[1] + ')'; }).join(', ') + '.' : '');
    if (!fromHash) ignored = [];  // a choice of the reader's own replaces the link's
    $('rule').textContent = note + (ignored.length ? ' The link names what this board does not hold, left out: ' + ignored.join(', ') + '.' : '');
    last = {names: names, rule: rule, result: res};
    var hash = toHash();
    $('share').href = hash || '#';
    if (!fromHash && location.hash !== hash) setUrl(hash);
    cite();
  }
  function sortBy(key, dir) {
    var rows = Array.from(body.rows), sign = dir === 'asc' ? 1 : -1;
    rows.sort(function (a, b) {
      var ca = cellOf(a, key), cb = cellOf(b, key), x = ca ? ca.dataset.v : '', y = cb ? cb.dataset.v : '';
      var nx = parseFloat(x), ny = parseFloat(y);
      if (isNaN(nx) && isNaN(ny)) return x === '' ? (y === '' ? 0 : 1) : y === '' ? -1 : sign * String(x).localeCompare(String(y));
      if (isNaN(nx)) return 1;  // blanks last, whichever the direction
      if (isNaN(ny)) return -1;
      return sign * (nx - ny);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function clickSort(th) {
    var key = keyOf(th);
    var dir = sort && sort.key === key ? (sort.dir === 'asc' ? 'desc' : 'asc') : (th.dataset.first || 'desc');  // best first
    sort = {key: key, dir: dir};
    apply();
    say(th.title ? th.textContent + ': ' + th.title : '');
  }
  Array.from(headRow.cells).forEach(function (th) {
    th.addEventListener('click', function () { clickSort(th); });
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); clickSort(th); } });
    th.addEventListener('focus', function () { say(th.title || ''); });
  });
  // what hover shows (a blank's reason, a cell's source, a task's description), shown on tap and focus too
  function say(text) { $('info').textContent = text; }
  table.addEventListener('focusin', function (e) { if (e.target.matches('abbr, span[title]')) say(e.target.title); });
  // -- the selection in the URL (#...): a view can be shared
  var FIELDS = ['bench', 'rule', 'view', 'search', 'model', 'modality', 'size', 'license', 'open'], PICKS = ['type', 'domain', 'lang', 'group', 'task'];
  var defaults = {};
  FIELDS.forEach(function (f) { defaults[f] = $('f-' + f).value; });
  function toHash() {
    var p = new URLSearchParams();
    FIELDS.forEach(function (f) { var v = $('f-' + f).value; if (v !== defaults[f]) p.set(f, v); });
    PICKS.forEach(function (f) { picked(f).forEach(function (v) { p.append(f, v); }); });
    if (sort) p.set('sort', sort.key + ':' + sort.dir);
    var s = p.toString();
    return s ? '#' + s : '';
  }
  var ignored = [];  // what the link named that this board does not hold (a typo, another board's task): said, not silently dropped
  function fromHash(given) {  // the view a link names: `given` (load's), else the page's own #...
    var p = new URLSearchParams((typeof given === 'string' ? given : location.hash).replace(/^#/, ''));
    ignored = [];
    FIELDS.forEach(function (f) {
      var el = $('f-' + f), v = p.has(f) ? p.get(f) : defaults[f];
      if (el.tagName === 'SELECT' && !Array.from(el.options).some(function (o) { return o.value === v; })) {
        if (p.has(f)) ignored.push(f + ' ' + v);
        v = defaults[f];
      }
      el.value = v;
    });
    PICKS.forEach(function (f) {
      var vs = p.getAll(f), inputs = Array.from($('f-' + f).querySelectorAll('input'));
      inputs.forEach(function (i) { i.checked = vs.indexOf(i.value) >= 0; });
      vs.forEach(function (v) { if (!inputs.some(function (i) { return i.value === v; })) ignored.push(f + ' ' + v); });
    });
    var s = p.get('sort') || '', cut = s.lastIndexOf(':'), key = s.slice(0, cut), dir = s.slice(cut + 1);  // a task key holds ':'
    sort = cut > 0 && (dir === 'asc' || dir === 'desc') && Array.from(headRow.cells).some(function (th) { return keyOf(th) === key; })
      ? {key: key, dir: dir} : null;
    apply(true);
  }
  window.addEventListener('hashchange', fromHash);
  function setUrl(hash) {  // an embedded page (srcdoc, a sandbox) may not change its URL: the view still works
    try { history.replaceState(null, '', hash || location.pathname + location.search); } catch (e) { /* no shared link there */ }
  }
  $('reset').addEventListener('click', function () { setUrl(''); fromHash(); });
  document.querySelectorAll('#filters select, #filters input, #row-filters select, #row-filters input').forEach(function (el) {
    el.addEventListener('input', function () { apply(); });
  });
  // -- the current view as CSV: the columns and rows shown, in their order, the numbers shown
  function csvCell(v) {
    v = String(v);
    // a spreadsheet would run it as a formula: prefixed with ' (OWASP); a number (a signed score, -3.2) stays a number
    if (/^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?$/.test(v)) v = "'" + v;
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }
  function csv() {
    var heads = Array.from(headRow.cells).filter(function (th) { return !th.hidden; });
    var lines = [heads.map(function (th) {
      var c = th.cloneNode(true); c.querySelectorAll('.flat').forEach(function (f) { f.remove(); });  // the header, not its mark
      return csvCell(c.textContent.trim());
    }).join(',')];
    Array.from(body.rows).filter(function (tr) { return !tr.hidden; }).forEach(function (tr) {
      lines.push(heads.map(function (th) {
        var key = keyOf(th), c = cellOf(tr, key);
        if (!c) return '';
        if (key === 'model') return csvCell(tr.dataset.model);
        if (key === 'rank' || key === 'interval' || key === 'ntasks') return csvCell(c.textContent.trim());
        return c.dataset.v === '' ? '' : csvCell(pct(parseFloat(c.dataset.v)));
      }).join(','));
    });
    return lines.join('\n') + '\n';
  }
  $('download').addEventListener('click', function () {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([csv()], {type: 'text/csv'}));
    a.download = (meta.benchmark || 'maeb') + '-leaderboard.csv';
    document.body.appendChild(a); a.click(); a.remove();
  });
  // -- the cite box: this view of the board, with the rule and the tasks it ranks
  // a field's text as BibTeX and LaTeX read it: BibTeX counts every brace (\{ too), so a name's braces are
  // \textbraceleft{}, never one that closes the field and opens another (title = {X}, author = {...})
  var BIB = {'\\': '\\textbackslash{}', '{': '\\textbraceleft{}', '}': '\\textbraceright{}', '$': '\\$', '&': '\\&',
    '#': '\\#', '_': '\\_', '%': '\\%', '^': '\\textasciicircum{}', '~': '\\textasciitilde{}'};
  function bib(text) { return String(text).replace(/[\\{}$&#_%^~]/g, function (c) { return BIB[c]; }); }
  function cite() {
    var when = (meta.generated || '').slice(0, 10), n = last.names.length;
    // the link of this view as the page writes it (a link it was opened with may hold raw braces), braces and
    // backslashes of the address percent-encoded
    var link = (location.href.split('#')[0] + toHash()).replace(/[{}\\\s]/g, function (c) { return encodeURIComponent(c); });
    $('cite-text').textContent = '@misc{maeb_leaderboard_' + when.replace(/-/g, '') + ',\n'
      + '  title = {' + bib(meta.benchmark || 'maeb results') + ' leaderboard' + (n === order.length ? '' : ', ' + n + ' of ' + order.length + ' tasks') + '},\n'
      + '  note = {maeb ' + bib(meta.maeb_version) + ', Borda rule ' + bib(last.rule) + ', generated ' + bib(when) + '},\n'
      + '  howpublished = {\\url{' + link + '}}\n}';
  }
  // -- the model card
  var dialog = $('card'), opener = null;
  function el(tag, text) { var e = document.createElement(tag); e.textContent = text; return e; }
  function breakable(text) {  // break points before a capital or digit after a small letter, before the word of an acronym run
    // (Sound8KT2A|Retrieval), and after / _ - . : never inside a word
    var frag = document.createDocumentFragment();
    String(text).split(/(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z0-9])(?=[A-Z][a-z])|(?<=[\/_.\-])/).forEach(function (part, i) {
      if (i) frag.appendChild(document.createElement('wbr'));
      frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }
  function show(model, from) {
    var card = data.cards[model], box = $('card-body');
    box.replaceChildren(el('h2', model));
    var dl = document.createElement('dl'); dl.className = 'card';
    var facts = [['Parameters', card.n_parameters == null ? 'not recorded' : Number(card.n_parameters).toLocaleString('en')],
      ['Embedding dimension', card.embed_dim == null ? 'not recorded' : card.embed_dim],
      ['Licence', card.license || 'not recorded'], ['Open weights', card.open_weights == null ? 'not recorded' : (card.open_weights ? 'yes' : 'no')],
      ['Modalities', (card.modalities || []).join(', ') || 'not recorded'], ['Revision', card.revisions.join(', ')],
      ['Protocol', card.protocol || 'not recorded'], ['Reference', card.reference || 'not recorded'],
      ['Facts from', card.source || 'nowhere: neither its results nor the catalog record them']];
    facts.forEach(function (f) {
      dl.appendChild(el('dt', f[0]));
      var dd = document.createElement('dd');
      if (f[0] === 'Reference' && /^https?:[/][/][^\s]+$/i.test(f[1])) { var a = el('a', f[1]); a.href = f[1]; dd.appendChild(a); }
      else dd.appendChild(breakable(f[1]));
      dl.appendChild(dd);
    });
    box.appendChild(dl);
    var t = document.createElement('table'), head = t.createTHead().insertRow();
    ['Task', 'Type', 'Score (%) ±band [interval]', 'From'].forEach(function (h) { head.appendChild(el('th', h)); });
    var tb = t.createTBody();
    data.scores[model].forEach(function (s) {
      var tr = tb.insertRow();
      s.forEach(function (v) { var td = document.createElement('td'); td.appendChild(breakable(v)); tr.appendChild(td); });
    });
    box.appendChild(t);
    opener = from || null;
    dialog.showModal();
    $('card-close').focus();
  }
  body.addEventListener('click', function (e) {
    var marked = e.target.closest('abbr, span[title]');
    if (marked) { say(marked.title); return; }  // a tap on a blank or a mark shows its reason, not the card
    var td = e.target.closest('td'), tr = e.target.closest('tr');
    if (td && td.title) say(td.title);
    if (tr) show(tr.dataset.model, tr);
  });
  body.addEventListener('keydown', function (e) {
    var tr = e.target.closest('tr');
    if (tr && e.target === tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); show(tr.dataset.model, tr); }
  });
  $('card-close').addEventListener('click', function () { dialog.close(); });
  dialog.addEventListener('close', function () { if (opener) opener.focus(); });
  // for readers' scripts and the tests: load(hash) shows the view a shared link names
  window.maebView = {compute: compute, selection: selection, csv: csv, apply: apply, state: function () { return last; },
    load: function (hash) { setUrl(hash); fromHash(hash || ''); }};
  fromHash();
  document.body.dataset.ready = 'yes';
})();
"""
