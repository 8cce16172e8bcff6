// heta-eval report: the per-query table (sort, filter, pages) and the drill-down.
// Every text from the data is set with textContent: it is shown, never parsed as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE = 50;
  var S = D.systems, N = D.qids.length;
  var state = { metric: D.metrics[0] || null, pair: S.length > 1 ? 0 : -1, sort: "worst",
                dir: 1, filter: "", page: 0, open: -1 };
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
  function fmt(v) { return v === null || v === undefined ? "–" : (typeof v === "number" ? v.toFixed(4) : String(v)); }
  function col(s) { var m = D.values[state.metric] || {}; return m[S[s]] || null; }
  function value(s, q) { var c = col(s); return c ? c[q] : null; }
  function diff(q) {
    if (state.pair < 0) return null;
    var a = value(pairs[state.pair][0], q), b = value(pairs[state.pair][1], q);
    return a === null || b === null || a === undefined || b === undefined ? null : b - a;
  }
  function worst(q) {
    var best = null;
    for (var s = 0; s < S.length; s++) { var v = value(s, q); if (v !== null && v !== undefined && (best === null || v < best)) best = v; }
    return best;
  }
  function key(q) {
    switch (state.sort) {
      case "worst": return worst(q);
      case "diff": return diff(q);
      case "absdiff": var d = diff(q); return d === null ? null : -Math.abs(d);
      case "id": return D.qids[q];
      default: return value(+state.sort.slice(4), q); // "sys:<index>"
    }
  }
  function rows() {
    var out = [], f = state.filter;
    if (f && !lower) lower = D.queries.map(function (t, q) { var s = D.shown_ids.q[q]; return (D.qids[q] + "\u0000" + (s ? s[0] : "") + "\u0000" + t).toLowerCase(); });
    for (var q = 0; q < N; q++) if (!f || lower[q].indexOf(f) >= 0) out.push(q);
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
        el("td", { cls: "id" }, ident("q", q)), el("td", { cls: "text" }, el("div", { text: D.queries[q] })));
      for (var s = 0; s < S.length; s++) tr.appendChild(el("td", { cls: "num", text: fmt(value(s, q)) }));
      if (state.pair >= 0) { var d = diff(q); tr.appendChild(el("td", { cls: "num", text: d === null ? "–" : (d >= 0 ? "+" : "") + d.toFixed(4) })); }
      tr.addEventListener("click", function () { drill(q); });
      frag.appendChild(tr);
    });
    body.textContent = ""; body.appendChild(frag);
    $("count").textContent = list.length + " of " + N + " queries";
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
  function label(q, index) {
    if (!D.has_labels) return "–";
    var l = D.labels[q][String(index)];
    return l === undefined ? "unjudged" : String(l);
  }
  function system(q, s) {
    var d = D.detail[S[s]][q], box = el("div", { cls: "system", "data-system": S[s] }, el("h4", { text: S[s] }));
    if (!d) { box.appendChild(el("p", { cls: "muted", text: "Not in this results folder (not run)." })); return box; }
    if (d.error) box.appendChild(el("p", { cls: "bad" }, "query failed: ", el("span", { text: d.error })));
    box.appendChild(el("p", { cls: "muted", text: d.retrieved + " documents retrieved from " + d.results + " hits" +
      (d.duplicate_chunks === null || d.duplicate_chunks === undefined ? "" : "; " + d.duplicate_chunks + " chunk hits collapsed into their documents" + (d.hits ? " (each shown under its document)" : (d.duplicate_chunks ? " (this results folder does not keep the chunk hits)" : ""))) +
      (d.unmapped ? "; " + d.unmapped + " hits named no document" : "") + (d.self_hits_removed ? "; " + d.self_hits_removed + " self-hits removed" : "") +
      (d.latency_ms === null ? "" : "; latency " + d.latency_ms.toFixed(1) + " ms") }));
    if (d.answer !== null) box.appendChild(el("div", null, el("strong", { text: "answer" }), el("pre", { text: d.answer })));
    var docs = el("table", { cls: "docs" }, el("thead", null, el("tr", null, el("th", { cls: "narrow", text: "rank" }), el("th", { cls: "doc", text: "document" }), el("th", { text: "title / snippet" }), el("th", { cls: "narrow", text: "label" }), el("th", { cls: "narrow", text: "score" }))));
    var tb = el("tbody");
    d.top.forEach(function (hit, r) {
      var l = label(q, hit[0]);
      tb.appendChild(el("tr", { cls: +l > 0 ? "rel" : "" }, el("td", { cls: "num", text: String(r + 1) }), el("td", null, ident("d", hit[0])),
        docCells(hit[0], d.hits ? d.hits[r] : null), el("td", { cls: "label", text: l }), el("td", { cls: "num", text: fmt(hit[1]) })));
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
    return box;
  }
  function drill(q) {
    state.open = q;
    var box = $("drill"); box.textContent = ""; box.hidden = false;
    var judged = D.has_labels ? Object.keys(D.labels[q]).length + " judged documents" : "no relevance labels";
    box.appendChild(el("h3", null, "query ", el("span", { cls: "qid" }, ident("q", q)), el("span", { cls: "muted", text: " (" + judged + ")" })));
    box.appendChild(el("div", { cls: "query", text: D.queries[q] }));
    if (D.dataset_note) box.appendChild(el("p", { cls: "bad", text: D.dataset_note }));
    for (var s = 0; s < S.length; s++) box.appendChild(system(q, s));
    draw();
    box.scrollIntoView({ block: "start" });
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
    draw();
  }
  setup();
})();
