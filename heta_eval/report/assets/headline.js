// heta-eval report: the headline's baseline, significance markers, Δ column, sorting and the
// toggle of its further columns; report.js calls it with the page's data (one parse).
// Every text from the data is set with textContent.
function reportHeadline(D) {
  "use strict";
  var table = document.getElementById("headline-table");
  if (!table) return;
  var H = D.headline;
  var body = table.tBodies[0], heads = table.tHead.rows[0].cells;
  var rows = Array.prototype.slice.call(body.rows);
  var marks = H.marks || {}, S = D.systems;
  // A baseline is offered where the page holds its pair with every other system.
  var bases = S.filter(function (b) { return S.every(function (s) { return s === b || (marks[b] && marks[b][s]); }); });
  var state = { base: bases.length ? bases[0] : S[0], metric: H.metrics[0], col: -1, dir: 1 };
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  function cell(tr, metric) {
    return tr.querySelector('td[data-metric="' + CSS.escape(metric) + '"]:not([data-aggregate="strict"])');
  }
  function num(td) { var v = td ? parseFloat(td.getAttribute("data-value")) : NaN; return isNaN(v) ? null : v; }
  function signed(v) { return (v >= 0 ? "+" : "−") + Math.abs(v).toFixed(4); }

  function mark() {
    var baseRow = rows.filter(function (tr) { return tr.getAttribute("data-system") === state.base; })[0];
    rows.forEach(function (tr) {
      var system = tr.getAttribute("data-system"), own = marks[state.base] && marks[state.base][system];
      tr.classList.toggle("baseline", system === state.base);
      tr.querySelector(".base-mark").textContent = system === state.base && S.length > 1 ? " (baseline)" : "";
      H.metrics.forEach(function (metric) {
        var td = cell(tr, metric); if (!td) return;
        var sig = td.querySelector(".sig"), m = own && own[metric];
        sig.textContent = ""; sig.className = "sig"; sig.removeAttribute("title");
        if (!m) return;
        var p = m[1] === null ? "–" : (m[1] < 1e-4 ? "<0.0001" : m[1].toFixed(4));
        sig.setAttribute("title", "paired Δ " + signed(m[0]) + " vs " + state.base + ", Holm p (perm) " + p);
        if (m[2]) { sig.textContent = m[0] > 0 ? "▲" : "▼"; sig.className = "sig " + (m[0] > 0 ? "up" : "down"); }
      });
      var delta = tr.querySelector("td.delta");
      if (!delta) return;
      var a = num(cell(tr, state.metric)), b = num(baseRow && cell(baseRow, state.metric));
      if (system === state.base) { delta.textContent = "baseline"; delta.setAttribute("data-sort", "0"); }
      else if (a === null || b === null) { delta.textContent = "–"; delta.setAttribute("data-sort", ""); }
      else { delta.textContent = signed(a - b); delta.setAttribute("data-sort", String(a - b)); }
    });
    var dh = document.getElementById("delta-head");
    if (dh) { dh.firstChild.textContent = "Δ " + state.metric; }
  }

  function sortBy(col) {
    state.dir = state.col === col ? -state.dir : (heads[col].getAttribute("data-sort-kind") === "text" ? 1 : -1);
    state.col = col;
    var metric = heads[col].getAttribute("data-metric");
    if (metric) { state.metric = metric; mark(); }
    var text = heads[col].getAttribute("data-sort-kind") === "text";
    var keyed = rows.map(function (tr, i) {
      var c = tr.cells[col], raw = c.hasAttribute("data-sort") ? c.getAttribute("data-sort") : c.textContent;
      var v = text ? raw : parseFloat(raw);
      return { tr: tr, i: i, v: text ? v : (isNaN(v) ? null : v) };
    });
    keyed.sort(function (x, y) {
      if (x.v === null) return y.v === null ? x.i - y.i : 1; // no value: last either way
      if (y.v === null) return -1;
      var c = text ? collator.compare(x.v, y.v) : (x.v < y.v ? -1 : x.v > y.v ? 1 : 0);
      return c ? c * state.dir : x.i - y.i;
    });
    keyed.forEach(function (k) { body.appendChild(k.tr); });
    Array.prototype.forEach.call(heads, function (th, i) {
      th.classList.toggle("sorted-up", i === col && state.dir > 0);
      th.classList.toggle("sorted-down", i === col && state.dir < 0);
      th.setAttribute("aria-sort", i === col ? (state.dir > 0 ? "ascending" : "descending") : "none");
    });
  }

  Array.prototype.forEach.call(heads, function (th, i) {
    th.classList.add("sortable");
    th.addEventListener("click", function () { sortBy(i); });
  });
  var select = document.getElementById("baseline");
  if (select) {
    bases.forEach(function (b) { var o = document.createElement("option"); o.value = b; o.textContent = b; select.appendChild(o); });
    select.addEventListener("change", function () { state.base = select.value; mark(); });
  }
  var more = document.getElementById("more-columns");
  table.classList.add("compact");
  more.addEventListener("click", function () {
    var open = table.classList.toggle("compact") === false;
    more.setAttribute("aria-expanded", String(open));
    more.textContent = open ? "hide strict aggregates, counts and reference checks" : "show strict aggregates, counts and reference checks";
  });
  document.getElementById("headline-controls").hidden = false;
  mark();
}
