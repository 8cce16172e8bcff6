// heta-eval report: the per-query table (sort, filter, pages) and the drill-down.
// Every text from the data is set with textContent: it is shown, never parsed as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE = 50;
  var S = D.systems, N = D.qids.length;
  var state = { metric: D.metrics[0] || null, pair: S.length > 1 ? 0 : -1, sort: "worst",
                dir: 1, filter: "", failedOnly: false, only: null, page: 0, open: -1 };
  var pairs = [];
  for (var i = 0; i < S.length; i++) for (var j = i + 1; j < S.length; j++) pairs.push([i, j]);
  var lower = null; // lower-cased query texts, made on the first filter
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    for (var c = 2; c < arguments.length; c++) {
      var child = arguments[c];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  // An id: the text heta_eval/report/text.py made of it (cut, every invisible or reordering
  // character visible) where shown_ids holds one, the whole id on hover; isolated by <bdi>.
  function ident(kind, i) {
    var whole = kind === "q" ? D.qids[i] : D.docs.ids[i], s = D.shown_ids[kind][i];
    return el("bdi", { cls: "ident", title: s && s.length > 1 ? s[1] : whole, text: s ? s[0] : whole });
  }
  function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  function fmt(v) { return v === null || v === undefined ? "–" : (typeof v === "number" ? v.toFixed(4) : String(v)); }
  function col(s) { var m = D.values[state.metric] || {}; return m[S[s]] || null; }
  function value(s, q) { var c = col(s); return c ? c[q] : null; }
  function diff(q) {
    if (state.pair < 0) return null;
    var a = value(pairs[state.pair][0], q), b = value(pairs[state.pair][1], q);
    return a === null || b === null || a === undefined || b === undefined ? null : b - a;
  }
  // A query that failed in a system: its error, else null.
  function failure(s, q) { var d = D.detail[S[s]][q]; return d && d.error !== null ? d.error : null; }
  function anyFailed(q) { for (var s = 0; s < S.length; s++) if (failure(s, q) !== null) return true; return false; }
  // Query ids in natural order (1, 2, 10, 100; q2 before q10), ranked once on first use.
  var idRank = null;
  function naturalRank(q) {
    if (!idRank) {
      var collator = new Intl.Collator(undefined, { numeric: true }), order = D.qids.map(function (_, i) { return i; });
      order.sort(function (a, b) { return collator.compare(D.qids[a], D.qids[b]) || (D.qids[a] < D.qids[b] ? -1 : D.qids[a] > D.qids[b] ? 1 : a - b); });
      idRank = new Array(N); order.forEach(function (q, r) { idRank[q] = r; });
    }
    return idRank[q];
  }
  function worst(q) {
    if (anyFailed(q)) return -Infinity; // a failed query is the worst there is: first
    var best = null;
    for (var s = 0; s < S.length; s++) { var v = value(s, q); if (v !== null && v !== undefined && (best === null || v < best)) best = v; }
    return best;
  }
  function key(q) {
    switch (state.sort) {
      case "worst": return worst(q);
      case "diff": return diff(q);
      case "absdiff": var d = diff(q); return d === null ? null : -Math.abs(d);
      case "id": return naturalRank(q);
      default: return value(+state.sort.slice(4), q); // "sys:<index>"
    }
  }
  function rows() {
    var out = [], f = state.filter;
    if (f && !lower) lower = D.queries.map(function (t, q) { var s = D.shown_ids.q[q]; return (D.qids[q] + "\u0000" + (s ? s[0] : "") + "\u0000" + t).toLowerCase(); });
    for (var q = 0; q < N; q++) {
      if (f && lower[q].indexOf(f) < 0) continue;
      if (state.failedOnly && !anyFailed(q)) continue;
      if (state.only && !state.only.set[q]) continue;
      out.push(q);
    }
    var keys = new Array(N);
    out.forEach(function (q) { keys[q] = key(q); });
    out.sort(function (x, y) {
      var a = keys[x], b = keys[y];
      if (a === null || a === undefined) return b === null || b === undefined ? x - y : 1;
      if (b === null || b === undefined) return -1;
      if (a < b) return -state.dir; if (a > b) return state.dir; return x - y;
    });
    return out;
  }

  function head() {
    var tr = $("query-head"); tr.textContent = "";
    var cells = [["id", "id", "id"], ["query", "text", null]];
    S.forEach(function (name, s) { cells.push([name, "val", "sys:" + s]); });
    if (state.pair >= 0) cells.push(["Δ " + S[pairs[state.pair][1]] + " − " + S[pairs[state.pair][0]], "val", "diff"]);
    cells.forEach(function (c) {
      var th = el("th", { cls: c[1], text: c[0] + (state.sort === c[2] ? (state.dir > 0 ? " ▲" : " ▼") : "") });
      if (c[2]) th.addEventListener("click", function () {
        state.dir = state.sort === c[2] ? -state.dir : 1; state.sort = c[2]; state.page = 0; draw();
      });
      tr.appendChild(th);
    });
  }
  function draw() {
    head();
    var list = rows(), pages = Math.max(1, Math.ceil(list.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var body = $("query-body"), frag = document.createDocumentFragment();
    list.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (q) {
      var tr = el("tr", { "data-q": q, cls: q === state.open ? "open" : "" },
        el("td", { cls: "id" }, el("a", { href: "#q=" + encodeURIComponent(D.qids[q]) }, ident("q", q))), el("td", { cls: "text" }, el("div", { text: D.queries[q] })));
      for (var s = 0; s < S.length; s++) {
        var err = failure(s, q);
        tr.appendChild(err === null ? el("td", { cls: "num", text: fmt(value(s, q)) })
          : el("td", { cls: "num failed", title: "query failed: " + err, text: "failed" }));
      }
      if (state.pair >= 0) { var d = diff(q); tr.appendChild(el("td", { cls: "num", text: d === null ? "–" : (d >= 0 ? "+" : "") + d.toFixed(4) })); }
      tr.addEventListener("click", function () { drill(q); });
      frag.appendChild(tr);
    });
    body.textContent = ""; body.appendChild(frag);
    $("count").textContent = list.length + " of " + N + (N === 1 ? " query" : " queries") + (state.only ? " (" + state.only.label + ")" : "");
    $("clear-only").hidden = !state.only;
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0; $("next").disabled = state.page >= pages - 1;
  }

  function docCells(index, hits) {
    var title = D.docs.titles[index], snippet = D.docs.snippets[index];
    return el("td", null, title ? el("strong", { text: title }) : null,
      el("div", { cls: "snippet", text: snippet || (D.has_texts ? "(not in the dataset)" : "(dataset not read)") }),
      hits ? chunkHits(hits) : null);
  }
  function chunkHits(hits) {
    // One line per chunk hit that collapsed into the document: chunk id, rank in the reply, score.
    var list = el("ul", { cls: "hits" });
    hits.forEach(function (h) {
      list.appendChild(el("li", null, h[0] === null ? el("span", { cls: "chunk", text: "(no chunk id)" }) : el("bdi", { cls: "chunk ident", title: h[3] || h[0], text: h[0] }),
        " rank " + h[1] + ", score " + fmt(h[2])));
    });
    return el("div", { cls: "chunk-hits" }, el("span", { cls: "muted", text: hits.length + (hits.length === 1 ? " chunk hit" : " chunk hits") }), list);
  }
  // Chunk hits are worth a line where the run was chunked, a document had several, or its
  // one hit was a chunk (not the whole document, `id#0`); else they repeat rank and score.
  function chunkHitsSay(s, doc, hits) {
    if (D.chunked[s] || hits.length > 1) return true;
    return hits.length === 1 && hits[0][0] !== null && hits[0][0] !== D.docs.ids[doc] + "#0";
  }
  function label(q, index) {
    if (!D.has_labels) return "–";
    var l = D.labels[q][String(index)];
    return l === undefined ? "unjudged" : String(l);
  }
  function system(q, s) {
    var d = D.detail[S[s]][q], box = el("div", { cls: "system", "data-system": S[s] }, el("h4", { text: S[s] }));
    if (!d) { box.appendChild(el("p", { cls: "muted", text: "Not in this results folder (not run)." })); return box; }
    if (d.error) {
      // A failed query has no documents and no scores: say so, and only so.
      box.appendChild(el("p", { cls: "bad" }, "query failed: ", el("span", { text: d.error })));
      box.appendChild(el("p", { cls: "muted", text: "No documents and no scores: the query failed, so every metric leaves it out (strict counts it as 0)." }));
      return box;
    }
    var collapsed = d.duplicate_chunks || 0;
    box.appendChild(el("p", { cls: "muted", text: plural(d.retrieved, "document") + " retrieved" + (d.results !== d.retrieved ? " from " + plural(d.results, "hit") : "") +
      (collapsed ? "; " + plural(collapsed, "chunk hit") + " collapsed into their documents" + (d.hits ? " (each shown under its document)" : " (this results folder does not keep the chunk hits)") : "") +
      (d.unmapped ? "; " + plural(d.unmapped, "hit") + " named no document" : "") + (d.self_hits_removed ? "; " + plural(d.self_hits_removed, "self-hit") + " removed" : "") +
      (d.latency_ms === null ? "" : "; latency " + d.latency_ms.toFixed(1) + " ms") }));
    // The answer leads only where something scored it; else it waits, folded, below.
    var answer = d.answer === null ? null : el("div", { cls: "answer" }, el("strong", { text: "answer" }), el("pre", { text: d.answer }));
    if (answer && D.answers_scored[s]) box.appendChild(answer);
    var docs = el("table", { cls: "docs" }, el("thead", null, el("tr", null, el("th", { cls: "narrow", text: "rank" }),
      d.moved ? el("th", { cls: "narrow", text: "first stage" }) : null, el("th", { cls: "doc", text: "document" }), el("th", { text: "title / snippet" }), el("th", { cls: "narrow", text: "label" }), el("th", { cls: "narrow", text: "score" }))));
    var tb = el("tbody");
    d.top.forEach(function (hit, r) {
      var l = label(q, hit[0]);
      tb.appendChild(el("tr", { cls: +l > 0 ? "rel" : "" }, el("td", { cls: "num", text: String(r + 1) }), d.moved ? el("td", { cls: "num moved", text: movedText(d.moved[r], r + 1) }) : null,
        el("td", null, ident("d", hit[0])), docCells(hit[0], d.hits && chunkHitsSay(s, hit[0], d.hits[r]) ? d.hits[r] : null), el("td", { cls: "label", text: l }), el("td", { cls: "num", text: fmt(hit[1]) })));
    });
    docs.appendChild(tb); box.appendChild(docs);
    if (!D.has_labels) box.appendChild(el("p", { cls: "muted", text: "No relevance labels: the dataset was not read." }));
    else if (d.missed.length) {
      var mt = el("tbody");
      d.missed.forEach(function (m) {
        mt.appendChild(el("tr", { cls: "missed" }, el("td", null, ident("d", m[0])), docCells(m[0]), el("td", { cls: "label", text: String(m[1]) }),
          el("td", { text: m[2] === null ? "not in the " + d.retrieved + " retrieved" : "rank " + m[2] })));
      });
      box.appendChild(el("div", null, el("strong", { text: "relevant documents not in the top " + d.top.length }),
        el("table", null, el("thead", null, el("tr", null, el("th", { cls: "doc", text: "document" }), el("th", { text: "title / snippet" }), el("th", { cls: "narrow", text: "label" }), el("th", { cls: "deep", text: "deeper" }))), mt)));
    } else box.appendChild(el("p", { cls: "muted", text: "Every relevant document is in the top " + d.top.length + "." }));
    var st = el("tbody");
    Object.keys(d.scores).forEach(function (name) {
      var sc = d.scores[name];
      st.appendChild(el("tr", null, el("td", { text: name }), el("td", { cls: "num", text: sc.skipped ? "skipped" : fmt(sc.value) }),
        el("td", { text: sc.passed === undefined ? "" : (sc.passed ? "passed" : "failed") }), el("td", null, sc.metadata ? el("pre", { text: sc.metadata }) : null)));
    });
    Object.keys(d.scores).forEach(function (name) {
      // Verdicts with a reason (an LLM judge) in plain sight; every detail is in the table below.
      var sc = d.scores[name];
      if (sc.reason === undefined) return;
      var verdict = sc.skipped ? "skipped" : (sc.passed === undefined ? fmt(sc.value) : (sc.passed ? "passed" : "failed"));
      box.appendChild(el("p", { cls: "verdict", "data-evaluator": name }, el("strong", { text: name + ": " + verdict }),
        " (" + fmt(sc.value) + ") ", el("span", { cls: "reason", text: sc.reason })));
    });
    box.appendChild(el("details", null, el("summary", { text: "scores, evidence, judge verdicts and reasons" }),
      el("table", null, el("thead", null, el("tr", null, el("th", { cls: "ev", text: "evaluator" }), el("th", { cls: "narrow", text: "value" }), el("th", { cls: "narrow", text: "pass" }), el("th", { text: "details" }))), st)));
    d.failures.forEach(function (f) { box.appendChild(el("p", { cls: "bad", text: "evaluator failed: " + f })); });
    if (answer && !D.answers_scored[s]) box.appendChild(el("details", { cls: "answer" }, el("summary", { text: "answer (nothing scored it)" }), answer));
    return box;
  }
  // A reranked document's rank in its first stage, and which way the second stage moved it.
  function movedText(was, now) {
    if (was === null) return "not in it";
    return (was > now ? "\u25b2 " : was < now ? "\u25bc " : "= ") + was;
  }
  // Rank of document index `doc` in system s for query q: its place in the top, its deeper
  // rank where kept, null where not retrieved; undefined where the system has no record.
  function rankOf(s, q, doc) {
    var d = D.detail[S[s]][q];
    if (!d || d.error !== null) return undefined;
    for (var r = 0; r < d.top.length; r++) if (d.top[r][0] === doc) return r + 1;
    for (var m = 0; m < d.missed.length; m++) if (d.missed[m][0] === doc) return d.missed[m][2];
    return null;
  }
  function rankText(s, q, doc) {
    var r = rankOf(s, q, doc), d = D.detail[S[s]][q];
    if (r === undefined) return d ? "query failed" : "not run";
    return r === null ? "not in the " + d.retrieved + " retrieved" : String(r);
  }
  function shownSystems() {
    // The chosen pair first, side by side; every other system after them.
    var first = state.pair >= 0 ? pairs[state.pair] : [0];
    return first.concat(S.map(function (_, s) { return s; }).filter(function (s) { return first.indexOf(s) < 0; }));
  }
  function relevantRanks(q, order) {
    var judged = Object.keys(D.labels[q]).filter(function (k) { return D.labels[q][k] > 0; });
    if (!judged.length) return null;
    judged.sort(function (a, b) { return D.labels[q][b] - D.labels[q][a] || a - b; });
    var head = el("tr", null, el("th", { cls: "doc", text: "relevant document" }), el("th", { text: "title" }), el("th", { cls: "narrow", text: "label" }));
    order.forEach(function (s) { head.appendChild(el("th", { cls: "deep", text: "rank in " + S[s] })); });
    var tb = el("tbody");
    judged.forEach(function (k) {
      var i = +k, tr = el("tr", { "data-doc": D.docs.ids[i] }, el("td", null, ident("d", i)), el("td", { text: D.docs.titles[i] || "" }), el("td", { cls: "label", text: String(D.labels[q][k]) }));
      order.forEach(function (s) { tr.appendChild(el("td", { cls: "num rank", "data-system": S[s], text: rankText(s, q, i) })); });
      tb.appendChild(tr);
    });
    return el("div", null, el("strong", { text: "Each relevant document's rank in each system" }), el("table", { cls: "ranks" }, el("thead", null, head), tb));
  }
  function drill(q) {
    state.open = q;
    var box = $("drill"); box.textContent = ""; box.hidden = false;
    var count = D.has_labels ? Object.keys(D.labels[q]).length : 0;
    var judged = D.has_labels ? count + (count === 1 ? " judged document" : " judged documents") : "no relevance labels";
    box.appendChild(el("h3", null, "query ", el("span", { cls: "qid" }, ident("q", q)), el("span", { cls: "muted", text: " (" + judged + ") " }),
      el("a", { cls: "permalink", href: "#q=" + encodeURIComponent(D.qids[q]), text: "link to this query" })));
    box.appendChild(el("div", { cls: "query", text: D.queries[q] }));
    if (D.dataset_note) box.appendChild(el("p", { cls: "bad", text: D.dataset_note }));
    var order = shownSystems();
    if (D.has_labels) { var ranks = relevantRanks(q, order); if (ranks) box.appendChild(ranks); }
    var sides = el("div", { cls: order.length > 1 ? "sides" : "" });
    order.forEach(function (s) { sides.appendChild(system(q, s)); });
    box.appendChild(sides);
    try { history.replaceState(null, "", "#q=" + encodeURIComponent(D.qids[q])); } catch (e) { /* a page without history */ }
    draw();
    box.scrollIntoView({ block: "start" });
  }
  // #q=ID opens that query's drill-down (on load, and when the address changes).
  function fromHash() {
    var h = location.hash;
    if (h.indexOf("#q=") !== 0) return;
    var id; try { id = decodeURIComponent(h.slice(3)); } catch (e) { return; }
    var q = D.qids.indexOf(id);
    if (q >= 0 && q !== state.open) drill(q);
  }

  // The table as CSV (every row the filter keeps, in the table's order; full precision);
  // kept in window.hetaReportCsv too, so what was downloaded can be read back.
  function csvCell(v) {
    var t = v === null || v === undefined ? "" : String(v);
    if (/^[=+\-@\t\r]/.test(t) && typeof v === "string") t = "'" + t; // no formula in a spreadsheet
    return /[",\n\r]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function csv() {
    var head = ["id", "query"].concat(S.map(function (n) { return n + " " + state.metric; }));
    if (state.pair >= 0) head.push("difference " + S[pairs[state.pair][1]] + " - " + S[pairs[state.pair][0]]);
    head.push("failed in");
    var lines = [head.map(csvCell).join(",")];
    rows().forEach(function (q) {
      var cells = [D.qids[q], D.queries[q]], failed = [];
      for (var s = 0; s < S.length; s++) {
        var v = value(s, q);
        cells.push(v === null || v === undefined ? null : v);
        if (failure(s, q) !== null) failed.push(S[s]);
      }
      if (state.pair >= 0) cells.push(diff(q));
      cells.push(failed.join("; "));
      lines.push(cells.map(csvCell).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }
  function download() {
    var text = csv();
    window.hetaReportCsv = text;
    var a = el("a", { download: "queries-" + state.metric.replace(/[^A-Za-z0-9@._-]/g, "_") + ".csv" });
    a.href = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
  }
  // Plot elements that stand for queries: a histogram bar filters the table to its queries,
  // a difference-plot bar opens its query.
  function queriesOfBin(rect) {
    var g = rect.closest("svg"), metric = g.getAttribute("data-metric");
    var low = +g.getAttribute("data-low"), span = +g.getAttribute("data-span"), bins = +g.getAttribute("data-bins");
    var s = S.indexOf(rect.getAttribute("data-system")), bin = +rect.getAttribute("data-bin"), set = {}, n = 0;
    var c = (D.values[metric] || {})[S[s]] || [];
    for (var q = 0; q < N; q++) {
      var v = c[q];
      if (v === null || v === undefined) continue;
      if (Math.min(Math.floor((v - low) / span * bins), bins - 1) === bin) { set[q] = true; n++; }
    }
    return { set: set, n: n, metric: metric, label: S[s] + " " + metric + " in " + rect.getAttribute("data-range") };
  }
  function plots() {
    Array.prototype.forEach.call(document.querySelectorAll("svg rect[data-bin]"), function (rect) {
      rect.addEventListener("click", function () {
        var only = queriesOfBin(rect);
        state.only = only; state.page = 0;
        if (D.metrics.indexOf(only.metric) >= 0) { state.metric = only.metric; $("metric").value = only.metric; }
        draw(); $("queries").scrollIntoView({ block: "start" });
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("svg polygon[data-metric]"), function (area) {
      area.addEventListener("click", function () {
        var a = S.indexOf(area.getAttribute("data-a")), b = S.indexOf(area.getAttribute("data-b"));
        pairs.forEach(function (pr, k) { if (pr[0] === a && pr[1] === b) { state.pair = k; $("pair").value = String(k); } });
        var metric = area.getAttribute("data-metric");
        if (D.metrics.indexOf(metric) >= 0) { state.metric = metric; $("metric").value = metric; }
        state.sort = "diff"; state.dir = 1; state.page = 0; $("sort").value = "diff";
        draw(); $("queries").scrollIntoView({ block: "start" });
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("svg rect[data-q]"), function (rect) {
      rect.addEventListener("click", function () {
        var q = D.qids.indexOf(rect.getAttribute("data-q"));
        if (q >= 0) drill(q);
      });
    });
  }

  function setup() {
    var m = $("metric");
    D.metrics.forEach(function (name) { m.appendChild(el("option", { value: name, text: name })); });
    m.addEventListener("change", function () { state.metric = m.value; state.page = 0; draw(); });
    var p = $("pair");
    if (!pairs.length) p.appendChild(el("option", { value: "-1", text: "(one system)" }));
    pairs.forEach(function (pr, k) { p.appendChild(el("option", { value: String(k), text: S[pr[1]] + " − " + S[pr[0]] })); });
    p.addEventListener("change", function () { state.pair = +p.value; draw(); });
    var so = $("sort");
    so.addEventListener("change", function () { state.sort = so.value; state.dir = 1; state.page = 0; draw(); });
    var timer = null, f = $("filter");
    f.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.filter = f.value.trim().toLowerCase(); state.page = 0; draw(); }, 120);
    });
    $("prev").addEventListener("click", function () { state.page--; draw(); });
    $("next").addEventListener("click", function () { state.page++; draw(); });
    var fo = $("failed-only");
    fo.addEventListener("change", function () { state.failedOnly = fo.checked; state.page = 0; draw(); });
    $("clear-only").addEventListener("click", function () { state.only = null; state.page = 0; draw(); });
    $("export-csv").addEventListener("click", download);
    window.addEventListener("hashchange", fromHash);
    plots();
    draw();
    reportHeadline(D); // headline.js, in this same script
    fromHash();
    // When the page is ready to use (bench/bench_report.py reads it).
    if (window.performance && performance.mark) performance.mark("heta-report-ready");
  }
  setup();
})();
