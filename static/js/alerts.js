// Alert list: a click anywhere on a row opens the alert (links, checkboxes and text selection
// keep their own behaviour; ctrl/cmd-click opens a new tab), and the header checkbox selects
// every open alert on the page for the bulk action. Works across the 10 s htmx refresh.
(function () {
  "use strict";
  function boxes() {
    return document.querySelectorAll('#alert-rows input[name="alert"][form="bulk-ack"]');
  }
  function syncAll() {
    var all = document.getElementById("sel-all-alerts");
    if (!all) return;
    var list = boxes(), on = 0;
    for (var i = 0; i < list.length; i++) if (list[i].checked) on++;
    all.checked = list.length > 0 && on === list.length;
    all.indeterminate = on > 0 && on < list.length;
    all.disabled = list.length === 0;
  }
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof Element)) return;
    var row = t.closest("#alert-rows tr[data-href]");
    if (!row || t.closest("a, input, button, label, select, textarea")) return;
    if (window.getSelection && String(window.getSelection()).length) return;
    var href = row.getAttribute("data-href");
    if (e.ctrlKey || e.metaKey) window.open(href, "_blank", "noopener");
    else window.location.assign(href);
  });
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (!(t instanceof HTMLInputElement)) return;
    if (t.id === "sel-all-alerts") {
      var list = boxes();
      for (var i = 0; i < list.length; i++) list[i].checked = t.checked;
    }
    syncAll();
  });
  // The filter form and the bulk form sit outside the swapped rows: keep their sort and query
  // in step with what the rows show, so a filter change keeps the sort and the bulk action
  // comes back to the same list.
  function syncForms() {
    var rows = document.getElementById("alert-rows");
    if (!rows) return;
    var sort = document.getElementById("alert-sort");
    var query = document.getElementById("bulk-query");
    if (sort) sort.value = rows.getAttribute("data-sort") || "";
    if (query) query.value = rows.getAttribute("data-query") || "";
  }
  document.addEventListener("htmx:afterSwap", function () { syncForms(); syncAll(); });
  document.addEventListener("DOMContentLoaded", syncAll);
})();
